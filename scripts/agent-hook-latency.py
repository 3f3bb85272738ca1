#!/usr/bin/env python3
"""Wall time of the Loop's hook processes in Claude Code, Codex, Gemini CLI
and opencode (issues 21 and 29).

Runs `tickloop loop AGENT hook EVENT` the way the agent does (a new process,
the hook JSON on stdin; opencode's plugin spawns the same processes) N times
per case, in a scratch state and audit directory, and prints the median,
95th percentile and maximum.

    scripts/agent-hook-latency.py [--agent claude-code|codex|gemini|opencode] [--tickloop PATH] [-n 200]

Cases: a person's prompt passed on; `/tick status` answered; a Stop with no
run; a Stop that completes a step and schedules the next one with a delay of
0 ms (the delay itself is the policy's, not the hook's overhead; a Stop that
continues the agent takes the delay plus this). Compare with Claude Code's
hook timeouts (60 s by default; install sets 30 s for the prompt hook and
600 s for Stop and the wake hook).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time


AGENT = "claude-code"


def run(tickloop, event, payload, env):
    start = time.perf_counter()
    p = subprocess.run([tickloop, "loop", AGENT, "hook", event], input=json.dumps(payload).encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - start
    if p.returncode not in (0, 2):
        raise SystemExit(f"hook {event} failed ({p.returncode}): {p.stderr.decode()}")
    return elapsed, p.stdout.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tickloop", default=shutil.which("tickloop") or "target/debug/tickloop")
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--agent", default="claude-code", choices=["claude-code", "codex", "gemini", "opencode"])
    args = ap.parse_args()
    global AGENT
    AGENT = args.agent
    scratch = tempfile.mkdtemp(prefix="tickloop-hook-latency-")
    env = dict(os.environ)
    env.update({
        "TICKLOOP_LOOP_STATE_DIR": os.path.join(scratch, "state"),
        "TICKLOOP_LOOP_AUDIT_DIR": os.path.join(scratch, "audit"),
        "TICKLOOP_LOOP_CONFIG": os.path.join(scratch, "loop.json"),
        "TICKLOOP_LOOP_DELAY_MS": "0",
        "TICKLOOP_RUNTIME_DIR": os.path.join(scratch, "rt"),
    })
    with open(env["TICKLOOP_LOOP_CONFIG"], "w") as f:
        f.write("{}")
    transcript = os.path.join(scratch, "transcript.jsonl")
    open(transcript, "w").close()

    def payload(session, event, prompt=None):
        return {"session_id": session, "transcript_path": transcript, "cwd": scratch,
                "hook_event_name": event, "prompt": prompt, "prompt_id": f"p-{time.monotonic_ns()}"}

    results = {}

    def case(name, fn):
        times = [fn(i) for i in range(args.n)]
        times.sort()
        results[name] = times

    case("UserPromptSubmit, a person's prompt",
         lambda i: run(args.tickloop, "user-prompt-submit", payload("s-prompt", "UserPromptSubmit", "hello"), env)[0])
    case("UserPromptSubmit, /tick status",
         lambda i: run(args.tickloop, "user-prompt-submit", payload("s-status", "UserPromptSubmit", "/tick status"), env)[0])
    case("Stop, no run", lambda i: run(args.tickloop, "stop", payload("s-stop", "Stop"), env)[0])

    # A run of 256 steps: each Stop completes a step and enqueues the next.
    session = "s-run"
    run(args.tickloop, "user-prompt-submit", payload(session, "UserPromptSubmit", "hello"), env)
    run(args.tickloop, "stop", payload(session, "Stop"), env)
    p = payload(session, "UserPromptSubmit", "/tick 256")
    run(args.tickloop, "user-prompt-submit", p, env)
    if AGENT in ("claude-code", "opencode"):
        run(args.tickloop, "wake", p, env)  # the first step, after the delay
    else:
        # Codex and Gemini CLI start no turn for a command: the first step
        # follows the next turn.
        run(args.tickloop, "user-prompt-submit", payload(session, "UserPromptSubmit", "go on"), env)
    decision = '"decision":"deny"' if AGENT == "gemini" else '"decision":"block"'

    def step(i):
        elapsed, out = run(args.tickloop, "stop", payload(session, "Stop"), env)
        if i < 255 and decision not in out:
            raise SystemExit(f"step {i}: the Stop hook did not continue the agent: {out!r}")
        return elapsed

    n, args.n = args.n, min(args.n, 255)
    case("Stop, a step completed and the next sent (delay 0)", step)
    args.n = n

    print(f"{args.tickloop}, {args.n} runs per case (ms):")
    for name, times in results.items():
        ms = [t * 1000 for t in times]
        p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
        print(f"  {name:55} median {statistics.median(ms):6.1f}  p95 {p95:6.1f}  max {max(ms):6.1f}")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
