#!/usr/bin/env python3
# `tickloop mcp` at MCP 2026-07-28, driven by the official Python MCP SDK
# (PyPI `mcp`), for tests/mcp_python.rs. Usage:
#   client_2026.py TICKLOOP COUNTER_TICK SCENARIO [MCP ARGS...]
# SCENARIO:
#   modern   mode="2026-07-28": lists tools, TickRead, a per-Tick call, reads
#            tick://counter/state; client.listen() hears a state change made
#            with `tickloop call` and a tool list change when a Tick opens.
#   auto     the default mode (server/discover first).
#   accept / decline / plain
#            a call of `ask` (approval policy ask) in mode="2026-07-28": the
#            elicitation callback accepts or declines the question; `plain`
#            declares no elicitation (the call waits; the test approves it
#            with the CLI).
#   typing   TickManage input into the person's shell `shell:mine` in
#            mode="2026-07-28": tickhost holds it; the elicitation callback
#            accepts (issue 27: an agent's typing waits for the person).
#   elsewhere
#            the same call driven by hand: the input-required result's shape;
#            the script prints ASKED, the test approves with the CLI and
#            writes a line; then the retry that declines gets the CLI's
#            outcome (the call ran); a made-up requestState is an error.
# The environment carries the test's TICKLOOP_RUNTIME_DIR. Prints one JSON
# line of findings; exits 1 with the reason on the first failed check.
import json
import os
import subprocess
import sys

import anyio
import mcp.types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

TICKLOOP, COUNTER, SCENARIO = sys.argv[1], sys.argv[2], sys.argv[3]
MCP_ARGS = sys.argv[4:]
URI = "tick://counter/state"
WAIT = 20  # seconds an event may take before the check fails


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def texts(result):
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


def tickloop(*args):
    out = subprocess.run([TICKLOOP, *args], capture_output=True, text=True)
    check(out.returncode == 0, f"tickloop {args}: {out.returncode} {out.stdout} {out.stderr}")
    return out.stdout


def server():
    return StdioServerParameters(
        command=TICKLOOP,
        args=["mcp", "--interval", "200", *MCP_ARGS],
        env={k: v for k, v in os.environ.items() if k.startswith("TICKLOOP") or k in ("PATH", "HOME")},
    )


async def next_event(sub, what):
    try:
        with anyio.fail_after(WAIT):
            return await sub.__anext__()
    except TimeoutError:
        check(False, f"no event {what}")


async def modern(findings):
    async with Client(server(), mode="2026-07-28") as client:
        findings["protocol"] = client.protocol_version
        listed = await client.list_tools()
        names = [t.name for t in listed.tools]
        findings["tools"] = names
        for name in ("TickManage", "TickRead", "TickCall", "counter__increment"):
            check(name in names, f"{name} not listed: {names}")
        check(listed.ttl_ms is not None and listed.ttl_ms > 0, f"tools/list ttlMs {listed.ttl_ms}")
        findings["tools_ttl_ms"] = listed.ttl_ms
        findings["tools_cache_scope"] = listed.cache_scope

        result = await client.call_tool("TickRead", {"instance": "counter"})
        check(not result.is_error, f"TickRead: {texts(result)}")
        check(json.loads(texts(result)[-1]) == result.structured_content, "TickRead text != structured")

        result = await client.call_tool("counter__increment", {"amount": 2})
        check(texts(result)[0].startswith("RESULT"), f"increment: {texts(result)}")
        check(result.structured_content["outcome"] == "result", f"{result.structured_content}")

        read = await client.read_resource(URI, cache_mode="bypass")
        state = json.loads(read.contents[0].text)
        check(state["data"]["value"] == 2, f"state after increment: {state}")
        check(read.ttl_ms is not None and read.ttl_ms <= 200, f"state ttlMs {read.ttl_ms}")
        findings["state_ttl_ms"] = read.ttl_ms

        # A state change made elsewhere reaches the listen stream.
        # A URI of no running Tick is left out of the acknowledgement.
        async with client.listen(resource_subscriptions=["tick://nothing/state", URI]) as sub:
            check(sub.honored.resource_subscriptions == [URI], f"honored {sub.honored}")
            findings["honored"] = sub.honored.resource_subscriptions
            described = await client.call_tool("TickDescribe", {"instance": "counter"})
            revision = str(described.structured_content["revision"])
            tickloop("call", "counter", "increment", '{"amount": 3}', "--revision", revision)
            for _ in range(5):
                event = await next_event(sub, f"for {URI} after tickloop call")
                check(isinstance(event, ResourceUpdated) and event.uri == URI, f"event {event}")
                read = await client.read_resource(URI)
                value = json.loads(read.contents[0].text)["data"]["value"]
                if value == 5:
                    break
            check(value == 5, f"the state never showed the change: {value}")
            findings["resource_event"] = event.uri

        # A Tick opened elsewhere changes the tool list.
        async with client.listen(tools_list_changed=True) as sub:
            check(sub.honored.tools_list_changed, f"honored {sub.honored}")
            tickloop("open", "--id", "second", "--", COUNTER)
            event = await next_event(sub, "tools_list_changed after a Tick opened")
            check(isinstance(event, ToolsListChanged), f"event {event}")
            names = [t.name for t in (await client.list_tools()).tools]
            check("second__increment" in names, f"second__increment not listed after the event: {names}")
            findings["tools_event"] = True


async def auto(findings):
    async with Client(server()) as client:
        findings["protocol"] = client.protocol_version
        names = [t.name for t in (await client.list_tools()).tools]
        check("TickRead" in names, f"TickRead not listed: {names}")
        result = await client.call_tool("TickRead", {"instance": "counter"})
        check(not result.is_error, f"TickRead: {texts(result)}")


async def approval(findings):
    asked = []

    async def answer(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept" if SCENARIO == "accept" else "decline", content={})

    callback = answer if SCENARIO in ("accept", "decline") else None
    async with Client(server(), mode="2026-07-28", elicitation_callback=callback) as client:
        findings["protocol"] = client.protocol_version
        await client.list_tools()
        if SCENARIO == "plain":
            # Say when the call is sent: the test approves it with the CLI.
            print("CALLING", flush=True)
        result = await client.call_tool("ask__increment", {"amount": 4})
        findings["asked"] = asked
        findings["text"] = texts(result)[0]
        findings["structured"] = result.structured_content
        findings["is_error"] = result.is_error


async def typing(findings):
    asked = []

    async def accept(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={})

    async with Client(server(), mode="2026-07-28", elicitation_callback=accept) as client:
        result = await client.call_tool(
            "TickManage", {"action": "input", "instance": "shell:mine", "text": "echo typed-$((6*7))\r"})
        findings["asked"] = asked
        findings["is_error"] = result.is_error
        findings["text"] = texts(result)


async def elsewhere(findings):
    async def never(context, params):
        check(False, "the SDK's driver answered a question the script drives itself")

    async with Client(server(), mode="2026-07-28", elicitation_callback=never) as client:
        await client.list_tools()
        session = client.session
        first = await session.call_tool("ask__increment", {"amount": 4}, allow_input_required=True)
        check(isinstance(first, types.InputRequiredResult), f"not input required: {first}")
        check(first.request_state, f"no requestState: {first}")
        requests = first.input_requests or {}
        check(list(requests) == ["approval"], f"inputRequests {requests}")
        question = requests["approval"]
        check(question.method == "elicitation/create", f"{question}")
        check(question.params.mode == "form", f"{question}")
        findings["question"] = question.params.message
        print("ASKED", flush=True)
        line = await anyio.to_thread.run_sync(sys.stdin.readline)
        check(line.strip() == "APPROVED", f"the test wrote {line!r}")
        try:
            await session.call_tool(
                "ask__increment", {"amount": 4}, request_state="made-up",
                input_responses={"approval": types.ElicitResult(action="accept")}, allow_input_required=True)
            check(False, "a made-up requestState was taken")
        except MCPError as error:
            findings["made_up_state"] = str(error)
        result = await session.call_tool(
            "ask__increment", {"amount": 4}, request_state=first.request_state,
            input_responses={"approval": types.ElicitResult(action="decline")}, allow_input_required=True)
        check(isinstance(result, types.CallToolResult), f"not a result: {result}")
        findings["structured"] = result.structured_content


async def main():
    findings = {"scenario": SCENARIO}
    if SCENARIO == "modern":
        await modern(findings)
    elif SCENARIO == "auto":
        await auto(findings)
    elif SCENARIO == "elsewhere":
        await elsewhere(findings)
    elif SCENARIO == "typing":
        await typing(findings)
    else:
        await approval(findings)
    print(json.dumps(findings))


anyio.run(main)
