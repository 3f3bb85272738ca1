#!/usr/bin/env python3
# `tickloop mcp` driven by the official Python MCP SDK (PyPI `mcp`), for
# tests/mcp_python.rs (issue 38): TickManage opens a bash (the agent's own:
# nothing waits for a person), waits for its prompt, runs commands (their
# output and status), types text and keys, waits for output, reads the
# shell's state with TickRead, lists it as a resource and follows it
# subscribed (a command's end notifies); a wait the client abandons (the
# SDK's read timeout sends notifications/cancelled) ends.
# Usage: client_shell.py TICKLOOP; the environment carries the test's
# TICKLOOP_RUNTIME_DIR and HOME. Prints one JSON line of findings; exits 1
# with the reason on the first failed check.
import json
import os
import sys

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
import mcp.types as types

TICKLOOP = sys.argv[1]


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def texts(result):
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


async def main():
    server = StdioServerParameters(
        command=TICKLOOP,
        args=["mcp", "--interval", "200"],
        env={k: v for k, v in os.environ.items() if k.startswith("TICKLOOP") or k in ("PATH", "HOME")},
    )
    findings = {}
    updated = []
    arrived = {"event": anyio.Event()}

    async def on_message(message):
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            arrived["event"].set()

    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()

            async def manage(args, **kw):
                result = await session.call_tool("TickManage", args, **kw)
                check(not result.is_error, f"TickManage {args}: {texts(result)}")
                return result

            await manage({"action": "open", "command": ["bash"], "shell": True, "name": "sh"})
            waited = await manage({"action": "wait", "instance": "shell:sh", "prompt": True, "timeout": 30})
            check(waited.structured_content["shell"]["at_prompt"], f"prompt: {waited.structured_content}")

            ran = await session.call_tool(
                "TickManage", {"action": "run", "instance": "shell:sh", "command": ["echo from-mcp; false"]})
            command = ran.structured_content["command"]
            check(command["exit"] == 1 and command["output"] == "from-mcp\n", f"run: {ran.structured_content}")
            findings["run_text"] = texts(ran)[0]

            words = await manage({"action": "run", "instance": "shell:sh", "command": ["printf", "%s|", "a b", "c"]})
            findings["words_output"] = words.structured_content["command"]["output"]

            state = await session.call_tool("TickRead", {"instance": "shell:sh"})
            check(not state.is_error, f"TickRead: {texts(state)}")
            findings["read_commands"] = [c["command"] for c in state.structured_content["data"]["commands"]]

            await manage({"action": "input", "instance": "shell:sh", "text": "echo keyed", "keys": ["Enter"]})
            matched = await manage(
                {"action": "wait", "instance": "shell:sh", "pattern": "^keyed$", "screen": True, "timeout": 30})
            findings["matched"] = matched.structured_content["matched"]

            bad = await session.call_tool(
                "TickManage", {"action": "input", "instance": "shell:sh", "keys": ["Enter", "Nope"]})
            check(bad.is_error and "Nope" in texts(bad)[0], f"unknown key: {texts(bad)}")

            resources = await session.list_resources()
            findings["resources"] = [str(r.uri) for r in resources.resources]

            # Subscribed to the shell's state: a command's end notifies, and
            # the state read then holds it with its status.
            uri = "tick://shell:sh/state"
            await session.subscribe_resource(uri)
            arrived["event"] = anyio.Event()
            updated.clear()
            await manage({"action": "run", "instance": "shell:sh", "command": "(exit 3)"})
            ended = None
            for _ in range(5):
                try:
                    with anyio.fail_after(30):
                        await arrived["event"].wait()
                except TimeoutError:
                    check(False, f"no notifications/resources/updated for {uri} after a command")
                arrived["event"] = anyio.Event()
                check(updated[-1] == uri, f"updated {updated}")
                read_back = await session.read_resource(uri)
                state = json.loads(read_back.contents[0].text)
                last = state["data"]["commands"][-1]
                if last["command"] == "(exit 3)":
                    ended = last
                    break
            check(ended is not None, f"the state never showed the command: {state}")
            findings["subscribed_exit"] = ended["exit"]

            # Abandoned by the client after 1 s: the SDK sends
            # notifications/cancelled, and the server ends the wait.
            try:
                await session.call_tool(
                    "TickManage",
                    {"action": "wait", "instance": "shell:sh", "pattern": "never-printed", "timeout": 600},
                    read_timeout_seconds=1,
                )
                check(False, "a wait for text never printed answered")
            except Exception as error:  # the SDK's timeout error
                findings["abandoned"] = type(error).__name__
            # The session goes on.
            quiet = await manage({"action": "wait", "instance": "shell:sh", "quiet_ms": 100, "timeout": 30})
            findings["quiet"] = quiet.structured_content.get("timed_out", False)
            print(json.dumps(findings), flush=True)


anyio.run(main)
