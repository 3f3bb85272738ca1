#!/usr/bin/env python3
# TickManage `subscribe` for a Codex session named in `_meta`, as Codex sends
# it (`x-codex-turn-metadata.session_id`), through `tickloop mcp` started by
# this client (a person's SDK application: the bridge's own host), for
# tests/loop_hook_origin.rs (issue 49): a session id Codex never sent (no
# hook of its started its Loop) reaches nothing.
#
# Usage: subscribe_session.py TICKLOOP SESSION_ID INSTANCE; the environment
# carries the test's TICKLOOP_RUNTIME_DIR and TICKLOOP_LOOP_STATE_DIR.
# Prints one JSON line: {"is_error", "text"}.
import json
import os
import sys

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
import mcp.types as types

TICKLOOP, SESSION, INSTANCE = sys.argv[1], sys.argv[2], sys.argv[3]


async def main():
    server = StdioServerParameters(command=TICKLOOP, args=["mcp"], env=dict(os.environ))
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool(
                "TickManage",
                {"action": "subscribe", "instance": INSTANCE},
                meta={"x-codex-turn-metadata": {"session_id": SESSION, "thread_id": SESSION}},
            )
    texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    print(json.dumps({"is_error": bool(result.is_error), "text": "\n".join(texts)}))


anyio.run(main)
