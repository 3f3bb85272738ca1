#!/usr/bin/env python3
"""A shell used by an agent (issue 38): what Tickloop's `run` and `wait`
cost next to what tmux-based MCP servers do, in one run.

Two measurements, each on a bash started with no rc files:

  * `run true`, end to end as an agent's tool would: `tickloop run ID --
    true` (a whole CLI process: connect, type the command at the prompt,
    answer when the shell's integration says it ended, exit), against the
    tmux way of tmux MCP servers (tmux-mcp-tools, persistent-shell-mcp):
    `tmux send-keys -t P 'true; echo MARK' Enter`, then `tmux capture-pane
    -p` until MARK shows: once at once and then every 10 ms (as fast as a
    polling server gets), and every 200 ms after a first wait (a common
    choice: a poller for the prompt must wait, as the old prompt is on the
    screen right after send-keys; wait-for-text.sh polls every 0.5 s by
    default). Also the event-driven trick some use, `...; tmux wait-for -S
    SIG` typed after the command with `tmux wait-for SIG` blocking on it.
    None of them gets the 0.4-0.5 s delay tmux-mcp-tools puts before Enter.
    The ratios to each are printed; the goal was <= 0.5 of the polling one.
  * `keys ID t r u e Enter` then `wait ID --prompt` (two CLI processes),
    the way an agent types a command by keys and waits for it: the wait
    must answer with the prompt after `true`, not the one still on the
    screen when it was asked; each answer's commands_total is checked, and
    the stale answers are counted (0 is right). Also over a kept
    connection (the `keys` and `wait` requests `tickloop mcp` sends for
    MCP's `input` and `wait`), where no process start lies between the two.
    On the bench's bash, and on a zsh whose preexec hook starts one process
    before the shell marks the command's start (as history and prompt
    tools' hooks do).
  * output to `wait --text` answering: a client connected to tickhost (the
    wire protocol, as `tickloop mcp` keeps its connections) asks for a
    `wait --text MARK-N`; once it is registered, the bash is made to print
    MARK-N (a line written into a fifo it reads); the time from the write
    to the answer arriving is measured (p50, p90). It includes the fifo,
    the PTY, the launcher's scan of the output, and tickhost's relay.

Run: cargo build --release && python3 benches/shell_run.py [--bin target/release/tickloop] [-n 50]
Needs bash, zsh and tmux.
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def summary(name, ms):
    return f"{name:<34} p50 {statistics.median(ms):7.2f} ms   p90 {pct(ms, 90):7.2f} ms   (n={len(ms)})"


class Tickloop:
    def __init__(self, binary, runtime, home):
        self.binary = binary
        self.env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime, HOME=home)
        self.runtime = runtime

    def run(self, *args, check=True):
        out = subprocess.run([self.binary, *args], env=self.env, capture_output=True, text=True)
        if check and out.returncode != 0:
            sys.exit(f"tickloop {' '.join(args)} exited {out.returncode}: {out.stderr}")
        return out


class Wire:
    """One connection to tickhost, speaking its JSON lines (docs/cli.md)."""

    def __init__(self, runtime, version):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(os.path.join(runtime, "tickhost.sock"))
        self.file = self.sock.makefile("rb")
        self.send({"hello": {"version": version, "role": "client", "client": "mcp"}})
        answer = json.loads(self.file.readline())
        if answer.get("refused"):
            sys.exit(f"tickhost refused the bench's client: {answer}")
        self.next = 1

    def send(self, value):
        self.sock.sendall((json.dumps(value) + "\n").encode())

    def request(self, request):
        self.next += 1
        self.send({"id": self.next, "request": request})
        return self.next

    def reply(self):
        while True:
            message = json.loads(self.file.readline())
            if "reply" in message:
                return message["reply"]["reply"]


def tmux_polled(tmux, mark, poll, first_at_once):
    """send-keys, then capture-pane until MARK shows: at once and then every
    `poll` s, or (as a prompt-pattern poller must, the old prompt being on
    the screen right after send-keys) after each `poll`."""
    start = time.perf_counter()
    tmux("send-keys", "-t", "bench", f"true; echo {mark}", "Enter")
    while True:
        if not first_at_once:
            time.sleep(poll)
        shown = tmux("capture-pane", "-p", "-t", "bench")
        if any(line.strip() == mark for line in shown.splitlines()):
            return (time.perf_counter() - start) * 1000
        if first_at_once:
            time.sleep(poll)


def tmux_signalled(tmux, socket_name, i):
    """The event-driven tmux trick: the command signals a `tmux wait-for`."""
    start = time.perf_counter()
    signal = f"bench-{i}"
    tmux("send-keys", "-t", "bench", f"true; tmux -L {socket_name} wait-for -S {signal}", "Enter")
    tmux("wait-for", signal)
    return (time.perf_counter() - start) * 1000


# The rows of `keys ... Enter` then `wait --prompt`: (key, label).
KEYS_ROWS = {
    "keys:shell:bench": "bash: keys, wait --prompt (CLI)",
    "keys_wire:shell:bench": "bash: the same, kept connection",
    "keys:shell:hooked": "zsh+hook: keys, wait --prompt",
    "keys_wire:shell:hooked": "zsh+hook: kept connection",
}


def keys_then_prompt(tl, wire, instance):
    """`keys true Enter` then `wait --prompt` on `instance`, by two CLI
    processes and then over the kept connection: each one's time, and
    whether its answer was the prompt before the command (stale)."""
    def settled_total():
        # Whatever the last wait answered, the shell is done with it.
        tl.run("wait", instance, "--quiet", "100")
        return json.loads(tl.run("read", instance).stdout)["data"]["commands_total"]

    rows = []
    total = settled_total()
    start = time.perf_counter()
    tl.run("keys", instance, "t", "r", "u", "e", "Enter")
    waited = json.loads(tl.run("wait", instance, "--prompt").stdout)
    rows.append((f"keys:{instance}", (time.perf_counter() - start) * 1000,
                 waited["shell"]["commands_total"] != total + 1))
    total = settled_total()
    start = time.perf_counter()
    wire.request({"op": "keys", "instance": instance, "text": "true", "keys": ["Enter"]})
    typed = wire.reply()
    wire.request({"op": "wait", "instance": instance, "prompt": True, "timeout_ms": 10000})
    waited = wire.reply()
    ms = (time.perf_counter() - start) * 1000
    if "ok" not in typed or "ok" not in waited:
        sys.exit(f"keys and wait over the kept connection answered {typed} and {waited}")
    rows.append((f"keys_wire:{instance}", ms, waited["ok"]["shell"]["commands_total"] != total + 1))
    return rows


def bench_run(tl, tmux, socket_name, version, n):
    results = {"ours": [], "wire": [], "poll10": [], "poll200": [], "signal": []}
    stale = {}
    for name in KEYS_ROWS:
        results[name] = []
        stale[name] = 0
    wire = Wire(tl.runtime, version)
    for i in range(n):
        start = time.perf_counter()
        out = tl.run("run", "shell:bench", "--", "true", check=False)
        results["ours"].append((time.perf_counter() - start) * 1000)
        if out.returncode != 0:
            sys.exit(f"tickloop run true exited {out.returncode}: {out.stderr}")
        start = time.perf_counter()
        wire.request({"op": "run", "instance": "shell:bench", "command": "true", "timeout_ms": 10000})
        reply = wire.reply()
        results["wire"].append((time.perf_counter() - start) * 1000)
        if (reply.get("ok") or {}).get("command", {}).get("exit") != 0:
            sys.exit(f"run over the kept connection answered {reply}")
        for instance in ("shell:bench", "shell:hooked"):
            for name, ms, was_stale in keys_then_prompt(tl, wire, instance):
                results[name].append(ms)
                stale[name] += was_stale
        results["poll10"].append(tmux_polled(tmux, f"__done_{i}_a__", 0.010, True))
        results["poll200"].append(tmux_polled(tmux, f"__done_{i}_b__", 0.200, False))
        results["signal"].append(tmux_signalled(tmux, socket_name, i))
    return results, stale


def bench_wait(tl, version, fifo, n):
    latencies = []
    wire = Wire(tl.runtime, version)
    writer = os.open(fifo, os.O_WRONLY)
    for i in range(n):
        wire.request({"op": "wait", "instance": "shell:echo", "text": f"^MARK-{i}$", "timeout_ms": 10000})
        # Registered in the launcher well before the output (a bench, not a test).
        time.sleep(0.05)
        start = time.perf_counter()
        os.write(writer, f"{i}\n".encode())
        reply = wire.reply()
        latencies.append((time.perf_counter() - start) * 1000)
        ok = reply.get("ok") or {}
        if ok.get("matched") != f"MARK-{i}":
            sys.exit(f"wait answered {reply}")
    os.close(writer)
    return latencies


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, "target/release/tickloop"))
    parser.add_argument("-n", type=int, default=50)
    args = parser.parse_args()
    if not os.path.exists(args.bin):
        sys.exit(f"{args.bin} is missing: cargo build --release (or --bin target/debug/tickloop)")
    tmp = tempfile.mkdtemp(prefix="tl-bench-")
    runtime = os.path.join(tmp, "rt")
    home = os.path.join(tmp, "home")
    os.makedirs(home)
    tl = Tickloop(args.bin, runtime, home)
    socket_name = f"tl-bench-{os.getpid()}"

    def tmux(*a):
        return subprocess.run(["tmux", "-L", socket_name, "-f", "/dev/null", *a],
                              capture_output=True, text=True, check=True).stdout

    try:
        version = json.loads(tl.run("version", "--json").stdout)["wire_version"]
        # An agent types into it (the kept connection says `mcp`): allowed.
        tl.run("open", "--shell", "--agent-input", "auto", "--name", "bench", "--",
               "bash", "--norc", "--noprofile")
        tl.run("wait", "shell:bench", "--prompt")
        # A person's zsh whose preexec hook starts one process first.
        with open(os.path.join(home, ".zshrc"), "w") as rc:
            rc.write("preexec() { command true }\n")
        tl.run("open", "--shell", "--agent-input", "auto", "--name", "hooked", "--", "zsh")
        tl.run("wait", "shell:hooked", "--prompt")
        tmux("new-session", "-d", "-s", "bench", "-x", "120", "-y", "30", "bash --norc --noprofile")
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)
        tl.run("open", "--shell", "--no-integration", "--name", "echo", "--",
               "sh", "-c", f"while read l < {fifo}; do echo MARK-$l; done")
        # Warm both up.
        tl.run("run", "shell:bench", "--", "true")
        tmux("send-keys", "-t", "bench", "true", "Enter")
        time.sleep(0.3)

        r, stale = bench_run(tl, tmux, socket_name, version, args.n)
        waits = bench_wait(tl, version, fifo, args.n)
        load = os.getloadavg()
        print(f"# benches/shell_run.py, {time.strftime('%Y-%m-%d')}, build {args.bin}, "
              f"load average {load[0]:.1f} / {load[1]:.1f}, {os.cpu_count()} cores")
        print(summary("tickloop run ID -- true", r["ours"]))
        print(summary("run true, kept connection", r["wire"]))
        for name, label in KEYS_ROWS.items():
            print(summary(label, r[name]) + f"   stale {stale[name]}/{len(r[name])}")
        print(summary("tmux: capture at once, then 10 ms", r["poll10"]))
        print(summary("tmux: capture every 200 ms", r["poll200"]))
        print(summary("tmux: wait-for signal (no poll)", r["signal"]))
        median = {k: statistics.median(v) for k, v in r.items()}
        for k, label in (("poll10", "tmux 10 ms poll"), ("poll200", "tmux 200 ms poll"),
                         ("signal", "tmux wait-for")):
            print(f"ratio tickloop / {label} (p50): {median['ours'] / median[k]:.2f}")
        print(f"ratio kept connection / tmux 10 ms poll (p50): {median['wire'] / median['poll10']:.2f}")
        print(f"ratio bash keys + wait --prompt / tmux 10 ms poll (p50): "
              f"{median['keys:shell:bench'] / median['poll10']:.2f}")
        print(summary("output -> wait --text answered", waits))
        print(json.dumps({
            "run_true_ms_p50": median["ours"],
            "run_true_kept_connection_ms_p50": median["wire"],
            "keys_wait_prompt_ms_p50": {k: median[k] for k in KEYS_ROWS},
            "keys_wait_prompt_stale": stale,
            "tmux_poll10_ms_p50": median["poll10"],
            "tmux_poll200_ms_p50": median["poll200"],
            "tmux_wait_for_ms_p50": median["signal"],
            "wait_text_ms_p50": statistics.median(waits),
            "wait_text_ms_p90": pct(waits, 90),
        }))
    finally:
        subprocess.run(["tmux", "-L", socket_name, "kill-server"], capture_output=True)
        tl.run("shutdown", check=False)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
