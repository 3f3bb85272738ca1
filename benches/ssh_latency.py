#!/usr/bin/env python3
"""Ticks on other machines (issue 17): what `--host` costs next to plain ssh.

Starts a private sshd on 127.0.0.1 (host key, authorized key and client
config generated into a temporary directory, as tests/common/sshd.rs does),
opens a counter Tick and a `cat` shell on the "remote" side, then measures
in one run:

  * request latency: `ssh remote true`, `ssh remote tmux list-sessions`
    and `tickloop --host remote read c`, each N times, with one ssh
    connection per command and again with a shared ControlMaster
    connection;
  * keystroke echo: a key typed into `tickloop --host remote attach` of the
    `cat` shell until it shows on the local terminal, next to the same key
    typed into `ssh -t remote tmux attach` of a tmux session running `cat`.

Run: cargo build && python3 benches/ssh_latency.py [--bin target/debug/tickloop] [-n 30]
Needs openssh-server, openssh-client and tmux; runs as the current user.
"""
import argparse
import os
import pty
import re
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ESCAPES = re.compile(rb"\x1b\[[0-9;?<>= ]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78MDEc]")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_sshd(d, bin_dir, runtime):
    for name in ("host_key", "id"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/{name}"], check=True)
    shutil.copy(f"{d}/id.pub", f"{d}/authorized_keys")
    port = free_port()
    with open(f"{d}/sshd_config", "w") as f:
        f.write(
            f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n"
            "UsePAM no\nStrictModes no\nPermitRootLogin yes\nPasswordAuthentication no\n"
            f"PubkeyAuthentication yes\nAuthorizedKeysFile {d}/authorized_keys\n"
            "MaxStartups 100\nMaxSessions 100\n"
            f"SetEnv PATH={bin_dir}:/usr/local/bin:/usr/bin:/bin TICKLOOP_RUNTIME_DIR={runtime}\n"
        )
    user = subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
    base = (
        f"  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  IdentityFile {d}/id\n"
        f"  IdentitiesOnly yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile {d}/known_hosts\n"
        "  BatchMode yes\n  LogLevel ERROR\n"
    )
    with open(f"{d}/ssh_config", "w") as f:
        f.write("Host remote\n" + base + "  ControlMaster no\n  ControlPath none\n")
        f.write("Host shared\n" + base + f"  ControlMaster auto\n  ControlPath {d}/cm-%C\n  ControlPersist 60\n")
    os.makedirs("/run/sshd", exist_ok=True)
    sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", f"{d}/sshd_config"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for line in sshd.stderr:
        if b"Server listening" in line:
            break
    return sshd


def timed(cmd, env, n):
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        samples.append((time.perf_counter() - t) * 1000)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed: {r.stderr.decode()}")
    return samples


def summary(samples):
    s = sorted(samples)
    return f"median {statistics.median(s):7.1f} ms   p90 {s[int(len(s) * 0.9) - 1]:7.1f} ms   min {s[0]:7.1f} ms"


def read_until(fd, pred, limit=20.0):
    buf = b""
    deadline = time.time() + limit
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
            if pred(buf):
                return buf
    raise SystemExit(f"timed out; saw {buf[-300:]!r}")


def echo(cmd, env, n, ready):
    """Types N keys into CMD on a pty; the ms from each write until the key
    shows in the output (escape sequences stripped)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.clear()
        os.environ.update(env)
        os.execvp(cmd[0], cmd)
    import fcntl
    import struct
    import termios
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    read_until(fd, lambda b: ready in b)
    # The view's key hint on its last row goes away after 3 s: let it.
    time.sleep(4)
    try:
        while select.select([fd], [], [], 0.2)[0]:
            os.read(fd, 65536)
    except OSError:
        pass
    samples = []
    letters = b"abcdefghijklmnopqrstuvwxyz"
    for i in range(n):
        key = letters[i % len(letters):i % len(letters) + 1]
        t = time.perf_counter()
        os.write(fd, key)
        read_until(fd, lambda b: key in ESCAPES.sub(b"", b))
        samples.append((time.perf_counter() - t) * 1000)
        time.sleep(0.02)
        try:
            while select.select([fd], [], [], 0.05)[0]:
                os.read(fd, 65536)
        except OSError:
            pass
    os.kill(pid, signal.SIGTERM)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    os.close(fd)
    return samples


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/debug/tickloop"))
    ap.add_argument("-n", type=int, default=30)
    args = ap.parse_args()
    exe = os.path.abspath(args.bin)
    d = tempfile.mkdtemp(prefix="tl-sshbench", dir="/tmp")
    runtime = tempfile.mkdtemp(prefix="tlr", dir="/tmp")
    local_rt = tempfile.mkdtemp(prefix="tll", dir="/tmp")
    sshd = start_sshd(d, os.path.dirname(exe), runtime)
    ssh = ["ssh", "-F", f"{d}/ssh_config"]
    env = dict(os.environ, TICKLOOP_SSH=" ".join(ssh), TICKLOOP_REMOTE_TICKLOOP=exe,
               TICKLOOP_RUNTIME_DIR=local_rt, TERM="xterm-256color")
    env.pop("TICKLOOP_HOST", None)
    tmux_sock = f"tl-sshbench-{os.getpid()}"
    try:
        t = [exe, "--host", "remote"]
        subprocess.run(t + ["open", "--id", "c", "--", os.path.join(ROOT, "tests/ticks/counter.py")],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        subprocess.run(t + ["open", "--shell", "--id", "cat", "--", "cat"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["tmux", "-L", tmux_sock, "-f", "/dev/null", "new-session", "-d", "-s", "echo",
                        "-x", "120", "-y", "30", "cat"], check=True)
        subprocess.run(["tmux", "-L", tmux_sock, "set", "-g", "status", "off"], check=True)
        uname = subprocess.run(["uname", "-srm"], capture_output=True, text=True).stdout.strip()
        print(f"# ssh_latency.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {uname}, "
              f"{os.cpu_count()} cpus, n={args.n}, binary {os.path.relpath(exe, ROOT)}")
        print(f"# {subprocess.run(['ssh', '-V'], capture_output=True, text=True).stderr.strip()}, loopback sshd")
        print("\n## request latency (wall time of one whole command)")
        for label, host in (("one ssh connection per command", "remote"),
                            ("shared ControlMaster connection", "shared")):
            # Warm the master (and tickhost) first.
            subprocess.run(ssh + [host, "true"], check=True)
            subprocess.run([exe, "--host", host, "read", "c"], env=env, check=True, stdout=subprocess.DEVNULL)
            print(f"\n{label}:")
            rows = [
                (f"ssh {host} true", timed(ssh + [host, "true"], env, args.n)),
                (f"ssh {host} tmux list-sessions",
                 timed(ssh + [host, f"tmux -L {tmux_sock} list-sessions"], env, args.n)),
                (f"tickloop --host {host} read c", timed([exe, "--host", host, "read", "c"], env, args.n)),
            ]
            for name, samples in rows:
                print(f"  {name:42} {summary(samples)}")
        print("\n## keystroke echo (key written to the local pty until it shows there)")
        rows = [
            ("tickloop --host remote attach shell:cat",
             echo([exe, "--host", "remote", "attach", "shell:cat"], env, args.n, b"\x1b[")),
            ("ssh -t remote tmux attach (cat)",
             echo(ssh + ["-t", "remote", f"tmux -L {tmux_sock} attach -t echo"], env, args.n, b"\x1b[")),
        ]
        for name, samples in rows:
            print(f"  {name:42} {summary(samples)}")
    finally:
        subprocess.run([exe, "--host", "remote", "shutdown"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        subprocess.run(["tmux", "-L", tmux_sock, "kill-server"], stderr=subprocess.DEVNULL)
        subprocess.run(ssh + ["-O", "exit", "shared"], stderr=subprocess.DEVNULL)
        sshd.terminate()
        sshd.wait()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
