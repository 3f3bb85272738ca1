#!/usr/bin/env python3
# An agent's call through `tickloop mcp`, made with the official Python MCP
# SDK (PyPI `mcp`), for tests/web.rs: `counter__increment {"amount": N}` on
# the test's `hosted:counter`, whose policy is `ask`, so tickhost holds it
# until a person decides. No elicitation callback: the agent host asks
# nobody, the person answers elsewhere (the page, the Monitor).
#
# Usage: agent_call.py TICKLOOP AMOUNT; prints the call's result as one JSON
# line ({"error": bool, "text": [...]}).
import json
import os
import sys

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
import mcp.types as types

TICKLOOP, AMOUNT = sys.argv[1], int(sys.argv[2])


async def main():
    # The SDK passes on only a few variables by default: the test's runtime
    # directory must reach `tickloop mcp`.
    env = {
        k: v
        for k, v in os.environ.items()
        if k.startswith("TICKLOOP") or k in ("PATH", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")
    }
    server = StdioServerParameters(command=TICKLOOP, args=["mcp"], env=env)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            with anyio.fail_after(120):
                result = await session.call_tool("counter__increment", {"amount": AMOUNT})
            texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
            print(json.dumps({"error": bool(result.is_error), "text": texts}), flush=True)


anyio.run(main)
