#!/usr/bin/env python3
# The agent host asked the person (issue 27), with the official Python MCP
# SDK (PyPI `mcp`) as the host, for tests/consent_in_host.rs. The SDK's
# initialize handshake (ClientSession.initialize: the legacy mode, revision
# 2025-11-25) against `tickloop mcp`, with a counter Tick `hosted:counter`
# whose approval policy is `ask`:
#
#   elicit  with an elicitation callback: Accept runs the call once, Decline
#           and a dismissed dialog (cancel) run nothing (not executed, -32010,
#           data.by "mcp-host"), and an answer given elsewhere first
#           (`tickloop approve`) withdraws the host's question (the callback
#           is cancelled);
#   plain   without a callback: no question; the call waits and the test's
#           `tickloop approve` lets it run (today's behaviour);
#   off     with a callback but `[approval] ask_in_host = false`: no question.
#   monitor with a callback that leaves the question open: the test answers
#           in the Monitor (its `y`), which withdraws the host's question.
#   shown   the agent types into the person's shell `shell:mine` (TickManage
#           input): Trojan Source's bidi controls and a zero-width space
#           are asked about escaped (declined: nothing typed); an input
#           too long for a host's dialog is not asked in the host, the
#           agent is told why, and the test's CLI refuses it.
#
# Usage: client.py TICKLOOP MODE SERVER_STDERR_FILE; the environment carries
# the test's TICKLOOP_RUNTIME_DIR and XDG_CONFIG_HOME. Prints one JSON line
# of findings; exits 1 with the reason on the first failed check.
import json
import os
import subprocess
import sys

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
import mcp.types as types

TICKLOOP, MODE, SERVER_STDERR = sys.argv[1], sys.argv[2], sys.argv[3]
WAIT = 30  # seconds a question or a held call may take to show before a check fails
HOST = types.Implementation(name="sdk-consent-test", version="1.0")


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def texts(result):
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


def tickloop(*args):
    out = subprocess.run([TICKLOOP, *args], capture_output=True, text=True, timeout=WAIT)
    check(out.returncode == 0, f"tickloop {args}: {out.returncode} {out.stdout} {out.stderr}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


async def decide_when_held(findings, verb="approve"):
    """Approves (or refuses) the first action that waits, as a person in a
    terminal would; findings["approved_from_cli"] (or "refused_...") names it."""
    with anyio.fail_after(WAIT):
        while True:
            held = tickloop("approvals")
            if held:
                tickloop(verb, held[0]["instance"], held[0]["call"])
                findings[f"{verb}d_from_cli"] = held[0]["call"]
                return
            await anyio.sleep(0.05)


def value():
    return tickloop("read", "hosted:counter")[0]["data"]["value"]


async def main():
    questions = []
    answers = []  # what the callback answers, one per question, in order
    withdrawn = []

    async def on_elicit(context, params):
        questions.append({"message": params.message, "schema": params.requested_schema, "mode": params.mode})
        answer = answers.pop(0) if answers else "monitor"
        if answer == "monitor":
            # The person answers in the Monitor (the test presses `y`).
            try:
                with anyio.fail_after(WAIT):
                    await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                withdrawn.append(params.message)
                raise
            check(False, "the question was never withdrawn")
        if answer != "elsewhere":
            return types.ElicitResult(action=answer, content={} if answer == "accept" else None)
        # A person answers in a terminal while the host still asks.
        held = tickloop("approvals")
        check(len(held) == 1, f"one waiting call: {held}")
        check(held[0]["call"] in params.message, f"the call id in the question: {params.message}")
        tickloop("approve", held[0]["instance"], held[0]["call"])
        try:
            with anyio.fail_after(WAIT):
                await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            withdrawn.append(params.message)
            raise
        check(False, "the question was never withdrawn")

    callback = None if MODE == "plain" else on_elicit
    server = StdioServerParameters(
        command=TICKLOOP,
        args=["mcp", "--interval", "200"],
        env={
            k: v
            for k, v in os.environ.items()
            if k.startswith("TICKLOOP") or k in ("PATH", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")
        },
    )
    findings = {"mode": MODE}
    with open(SERVER_STDERR, "w", encoding="utf-8") as errlog:
        async with stdio_client(server, errlog=errlog) as (read, write):
            async with ClientSession(read, write, elicitation_callback=callback, client_info=HOST) as session:
                init = await session.initialize()
                findings["protocol"] = init.protocol_version
                check(init.protocol_version == "2025-11-25", f"negotiated {init.protocol_version}")
                await session.list_tools()
                if MODE == "elicit":
                    await elicit(session, answers, questions, withdrawn, findings)
                elif MODE == "shown":
                    await shown(session, answers, questions, findings)
                elif MODE == "monitor":
                    result = await session.call_tool("counter__increment", {"amount": 6})
                    check(texts(result)[0].startswith("RESULT"), f"monitor: {texts(result)}")
                    with anyio.fail_after(WAIT):
                        while not withdrawn:
                            await anyio.sleep(0.05)
                    findings["withdrawn"] = len(withdrawn)
                    findings["questions"] = len(questions)
                else:
                    async with anyio.create_task_group() as tasks:
                        tasks.start_soon(decide_when_held, findings)
                        result = await session.call_tool("counter__increment", {"amount": 4})
                    check(texts(result)[0].startswith("RESULT"), f"{MODE}: {texts(result)}")
                    check(value() == 4, f"{MODE}: the approved call ran once: {value()}")
                    check(not questions, f"{MODE}: the host was asked: {questions}")
    print(json.dumps(findings))


async def elicit(session, answers, questions, withdrawn, findings):
    # Accept: runs once.
    answers.append("accept")
    result = await session.call_tool("counter__increment", {"amount": 2})
    check(texts(result)[0].startswith("RESULT"), f"accept: {texts(result)}")
    check(value() == 2, f"accept ran once: {value()}")
    check(len(questions) == 1, f"one question: {questions}")
    question = questions[0]
    check(question["mode"] == "form", f"form mode: {question}")
    check(question["schema"].get("properties") == {}, f"an empty form: {question}")
    # What will happen in plain words first, who asks, the deadline, then
    # the details (docs/approval.md, "In the agent host").
    for part in ("Add an integer to the counter? · hosted:counter", "Asked by ", "Answer by ",
                 "increment", '{"amount":2}', "rev 1"):
        check(part in question["message"], f"{part} in the question: {question['message']}")
    findings["question"] = question["message"]

    # Decline and dismiss: nothing runs, the agent is told not executed.
    for answer, amount in (("decline", 3), ("cancel", 5)):
        answers.append(answer)
        result = await session.call_tool("counter__increment", {"amount": amount})
        text = texts(result)
        check(result.is_error and text[0].startswith("NOT EXECUTED"), f"{answer}: {text}")
        error = result.structured_content["error"]
        check(error["code"] == -32010, f"{answer}: {error}")
        check(error["data"]["by"] == "mcp-host", f"{answer}: {error}")
        check(value() == 2, f"{answer}: nothing ran: {value()}")
        findings[answer] = error["message"]

    # Answered elsewhere first: the host's question is withdrawn.
    answers.append("elsewhere")
    result = await session.call_tool("counter__increment", {"amount": 10})
    check(texts(result)[0].startswith("RESULT"), f"elsewhere: {texts(result)}")
    with anyio.fail_after(WAIT):
        while not withdrawn:
            await anyio.sleep(0.05)
    check(value() == 12, f"approved elsewhere, ran once: {value()}")
    findings["questions"] = len(questions)
    findings["withdrawn"] = len(withdrawn)


TROJAN = "echo safe \u202e\u2066; touch F\u2069 \u2066#\u2069\u202c\u200b"


async def shown(session, answers, questions, findings):
    answers.append("decline")
    result = await session.call_tool(
        "TickManage", {"action": "input", "instance": "shell:mine", "text": TROJAN + "\r"})
    check(result.is_error, f"declined: {texts(result)}")
    check(len(questions) == 1, f"one question: {questions}")
    findings["question"] = questions[0]["message"]
    # Too long for a host's dialog: asked only where it shows whole.
    long = "echo " + "x" * 1200
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(decide_when_held, findings, "refuse")
        result = await session.call_tool(
            "TickManage", {"action": "input", "instance": "shell:mine", "text": long + "\r"})
    check(result.is_error, f"refused: {texts(result)}")
    check(len(questions) == 1, f"the long input was asked in the host: {questions[1:]}")
    findings["long_result"] = " ".join(texts(result))


anyio.run(main)
