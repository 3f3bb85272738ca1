#!/usr/bin/env python3
# `tickloop mcp` driven by the official Python MCP SDK (PyPI `mcp`), for
# tests/mcp_python.rs: lists tools while a Tick with a {"type":"string"}
# schema and one with a top-level oneOf run (the SDK refuses a whole
# tools/list with one bad inputSchema), calls tools (the SDK lists tools again
# to check results), and follows a state resource across close, forget and
# reopen. Usage: client.py TICKLOOP COUNTER_TICK; the environment carries the
# test's TICKLOOP_RUNTIME_DIR. Prints one JSON line of findings; exits 1 with
# the reason on the first failed check.
import json
import os
import sys

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
import mcp.types as types

TICKLOOP, COUNTER = sys.argv[1], sys.argv[2]
URI = "tick://counter/state"
WAIT = 20  # seconds a notification may take before the check fails


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def texts(result):
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


async def main():
    updated = []
    arrived = anyio.Event()
    state = {"arrived": arrived}

    async def on_message(message):
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            state["arrived"].set()

    async def next_update(what):
        try:
            with anyio.fail_after(WAIT):
                await state["arrived"].wait()
        except TimeoutError:
            check(False, f"no notifications/resources/updated for {URI} {what}")
        state["arrived"] = anyio.Event()
        check(updated and updated[-1] == URI, f"updated {updated}")

    async def read_state():
        read = await session.read_resource(URI)
        return json.loads(read.contents[0].text)

    async def state_after_updates(what, done):
        # Each notification is followed by a read; a late one of an earlier
        # change may come first, so a few are allowed.
        for _ in range(5):
            await next_update(what)
            current = await read_state()
            if done(current):
                return current
        check(False, f"the state never showed the change {what}: {current}")

    server = StdioServerParameters(
        command=TICKLOOP,
        args=["mcp", "--interval", "200"],
        env={k: v for k, v in os.environ.items() if k.startswith("TICKLOOP") or k in ("PATH", "HOME")},
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            init = await session.initialize()
            findings = {"protocol": init.protocol_version}

            listed = await session.list_tools()
            names = [t.name for t in listed.tools]
            findings["tools"] = names
            for tool in listed.tools:
                schema = tool.input_schema
                check(schema.get("type") == "object", f"{tool.name}: inputSchema {schema}")
                for key in ("oneOf", "anyOf", "allOf", "not", "enum"):
                    check(key not in schema, f"{tool.name}: {key} at the top of {schema}")
            for name in ("TickRead", "TickCall", "schemas__echo", "schemas__pick", "counter__increment"):
                check(name in names, f"{name} not listed: {names}")
            check(not any("shout" in n for n in names), f"shout listed: {names}")

            # TickRead: the SDK lists tools again to check results.
            result = await session.call_tool("TickRead", {"instance": "counter"})
            check(not result.is_error, f"TickRead: {texts(result)}")
            check(json.loads(texts(result)[-1]) == result.structured_content, "TickRead text != structured")

            # A wrapped tool (top-level oneOf).
            result = await session.call_tool("schemas__pick", {"args": {"b": "x"}})
            check(not result.is_error, f"pick: {texts(result)}")
            check(texts(result)[0].startswith("RESULT"), f"pick: {texts(result)}")
            check(result.structured_content["result"]["args"] == {"b": "x"}, f"pick: {result.structured_content}")
            check(json.loads(texts(result)[-1]) == result.structured_content, "pick text != structured")

            # The left-out tool ({"type":"string"}): named by TickDescribe, reached by TickCall.
            result = await session.call_tool("TickDescribe", {"instance": "schemas"})
            offered = {e["tool"]: e for e in result.structured_content["mcp_tools"]}
            check(offered["shout"]["offered"] == "left_out", f"{offered}")
            result = await session.call_tool(
                "TickCall", {"instance": "schemas", "tool": "shout", "args": {}, "revision": "1"})
            check(result.is_error and texts(result)[0].startswith("NOT EXECUTED"), f"shout: {texts(result)}")

            # An unknown tool is a protocol error.
            try:
                await session.call_tool("nope__nothing", {})
                check(False, "an unknown tool answered with a result")
            except Exception as error:  # the SDK raises its McpError
                findings["unknown_tool_error"] = str(error)

            # A state resource across close, forget and reopen.
            await session.subscribe_resource(URI)
            result = await session.call_tool("counter__increment", {"amount": 2})
            check(texts(result)[0].startswith("RESULT"), f"increment: {texts(result)}")
            await next_update("after increment")
            check((await read_state())["data"]["value"] == 2, "value 2")

            result = await session.call_tool("TickManage", {"action": "close", "instance": "counter"})
            check(not result.is_error, f"close: {texts(result)}")
            await state_after_updates("after close", lambda s: "ended" in s)
            result = await session.call_tool("TickManage", {"action": "close", "instance": "counter"})
            check(not result.is_error, f"forget: {texts(result)}")
            result = await session.call_tool(
                "TickManage", {"action": "open", "command": [COUNTER], "name": "counter"})
            check(not result.is_error, f"reopen: {texts(result)}")
            fresh = await state_after_updates("after reopen", lambda s: "ended" not in s)
            check(fresh["data"]["value"] == 0, f"after reopen: {fresh}")

            findings["updated"] = updated
            print(json.dumps(findings))


anyio.run(main)
