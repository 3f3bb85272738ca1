#!/usr/bin/env python3
"""Reads the probe's records (tests/host_origin/probe.py) and prints, for each,
what tells who started it: the chain of parents (comm, executable, session,
process group, terminal, the agent markers in each one's own environment),
what fds 0/1/2 are and who holds their other ends.

    summary.py RECORDS.jsonl...
"""

import json
import sys

MARKERS = ("CLAUDECODE", "CODEX_THREAD_ID", "GEMINI_CLI", "OPENCODE", "AI_AGENT",
           "TICKLOOP_AGENT", "AGENT", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_ENTRYPOINT",
           "CODEX_SANDBOX", "CODEX_CI", "TICKLOOP_AGENT_SESSION")


def markers(proc):
    env = proc.get("environ", {})
    if "error" in env:
        return "environ unreadable (" + env["error"].split(":")[0] + ")"
    values = env.get("values", {})
    found = [f"{m}={values[m][:12]}" for m in MARKERS if m in values]
    return ",".join(found) or "-"


def line(proc, me=None):
    stat = proc.get("stat", {})
    status = proc.get("status", {})
    exe = proc.get("exe", "?")
    return (f"{proc['pid']:>7} {(proc.get('comm') or '?')[:15]:<15} sid={stat.get('sid')} "
            f"pgid={stat.get('pgid')} tty={stat.get('tty_nr')} nnp={status.get('NoNewPrivs')} "
            f"seccomp={status.get('Seccomp')} exe={exe.split('/')[-1] if exe else exe} "
            f"markers: {markers(proc)}")


def main():
    for path in sys.argv[1:]:
        for text in open(path, encoding="utf-8"):
            r = json.loads(text)
            print(f"== {r['label']} ({r['mode']}) controlling tty: {r['controlling_tty']}")
            print("  self " + line(r["self"]))
            for a in r["ancestors"]:
                print("   up " + line(a))
            for fd in ("0", "1", "2"):
                f = r["fds"].get(fd, {})
                held = ", ".join(f"{h['pid']}:{h['comm']}:{h['mode']}" for h in f.get("holders", []))
                peer = f.get("peer")
                peer = f" peer: {peer['pid']}:{peer['comm']}" if isinstance(peer, dict) else ""
                print(f"  fd{fd} {f.get('target')} tty={f.get('isatty')} held by: {held or '-'}{peer}")
            others = [f"{k}:{v['target']}" for k, v in r["fds"].items() if int(k) > 2]
            if others:
                print("  other fds: " + " ".join(others))


if __name__ == "__main__":
    main()
