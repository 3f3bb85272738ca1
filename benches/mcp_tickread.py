#!/usr/bin/env python3
"""TickRead round trips through `tickloop mcp` in MCP 2025-11-25 and 2026-07-28.

Opens the Tick `tests/ticks/note.py` in a private runtime directory, then
times `tools/call TickRead` (and `resources/read tick://note/state`, the
client's cache bypassed) through the official Python MCP SDK, one client
per revision: `mode="legacy"` (initialize, 2025-11-25) and
`mode="2026-07-28"` (per-request `_meta`, no initialize). Rounds alternate
between the revisions so load changes hit both alike. A round trip is what
the SDK's caller waits for: the SDK's own work (request `_meta`, result
validation) is in it.

Run (the SDK's virtual environment is the one tests/mcp_python.rs makes):
  cargo build && cargo test --test mcp_python -- --list >/dev/null
  target/tmp/python-mcp-2.3.0/bin/python benches/mcp_tickread.py [--bin target/debug/tickloop] [-n 200] [--rounds 3]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = {"2025-11-25": "legacy", "2026-07-28": "2026-07-28"}


def summary(samples):
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]
    return {
        "n": len(samples),
        "p50_ms": round(pick(0.5), 3),
        "p90_ms": round(pick(0.9), 3),
        "p99_ms": round(pick(0.99), 3),
        "mean_ms": round(statistics.fmean(samples), 3),
    }


async def one_round(server, mode, n):
    calls, reads = [], []
    async with Client(server, mode=mode) as client:
        assert client.protocol_version in MODES, client.protocol_version
        for _ in range(5):  # warm up: first describe, first watch
            await client.call_tool("TickRead", {"instance": "note"})
            await client.read_resource("tick://note/state", cache_mode="bypass")
        for _ in range(n):
            start = time.perf_counter()
            result = await client.call_tool("TickRead", {"instance": "note"})
            calls.append((time.perf_counter() - start) * 1000)
            assert not result.is_error, result
        for _ in range(n):
            start = time.perf_counter()
            await client.read_resource("tick://note/state", cache_mode="bypass")
            reads.append((time.perf_counter() - start) * 1000)
        return client.protocol_version, calls, reads


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, "target/debug/tickloop"))
    parser.add_argument("-n", type=int, default=200, help="round trips per round and revision")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    runtime = tempfile.mkdtemp(prefix="tl-mcpbench")
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime)
    subprocess.run([args.bin, "open", "--id", "note", "--", os.path.join(ROOT, "tests/ticks/note.py")],
                   env=env, check=True, capture_output=True)
    server = StdioServerParameters(command=args.bin, args=["mcp"], env={
        k: v for k, v in env.items() if k.startswith("TICKLOOP") or k in ("PATH", "HOME")})
    found = {v: {"TickRead": [], "resources/read": []} for v in MODES}
    try:
        for _ in range(args.rounds):
            for version, mode in MODES.items():
                spoken, calls, reads = anyio.run(one_round, server, mode, args.n)
                assert spoken == version, (spoken, version)
                found[version]["TickRead"] += calls
                found[version]["resources/read"] += reads
    finally:
        subprocess.run([args.bin, "close", "note"], env=env, capture_output=True)
        subprocess.run([args.bin, "close", "note"], env=env, capture_output=True)
        subprocess.run([args.bin, "shutdown"], env=env, capture_output=True)
        shutil.rmtree(runtime, ignore_errors=True)
    report = {v: {what: summary(s) for what, s in kinds.items()} for v, kinds in found.items()}
    load = os.getloadavg()
    print(f"tickloop mcp round trips, Python MCP SDK client, {args.rounds} rounds x {args.n} per revision")
    print(f"binary: {args.bin}; load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'revision':12} {'request':16} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'mean ms':>8}")
    for version, kinds in report.items():
        for what, s in kinds.items():
            print(f"{version:12} {what:16} {s['p50_ms']:8.3f} {s['p90_ms']:8.3f} {s['p99_ms']:8.3f} {s['mean_ms']:8.3f}")
    print(json.dumps(report))


if __name__ == "__main__":
    sys.exit(main())
