#!/usr/bin/env python3
# An agent's own MCP client (issue 49), with the official Python MCP SDK: what
# an agent would run from its shell tool, the host's markers still set, to
# answer its own question. It starts `tickloop mcp` with its whole
# environment, declares elicitation under the name it is given (a generic
# client, or `claude-code`), and would accept any question at once. It asks
# to type `echo own-42` into the person's shell `shell:mine`.
#
# Usage: own_client.py TICKLOOP CLIENT_NAME OUT_DIR (made when missing)
#
# When the first progress of the held input arrives it writes
# OUT_DIR/progress.json (the test then answers as the person, elsewhere);
# at the end OUT_DIR/findings.json: the questions it was asked, the progress
# messages, the call's result text. Exits 1 with the reason on a failed
# check.
import json
import os
import sys

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
import mcp.types as types

TICKLOOP, NAME, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(OUT, exist_ok=True)


def write(name, value):
    path = os.path.join(OUT, name)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(value, f)
    os.replace(path + ".tmp", path)


async def main():
    questions = []
    progress = []

    async def on_elicit(context, params):
        # The agent answers its own question: accept, at once.
        questions.append(params.message)
        return types.ElicitResult(action="accept", content={})

    async def on_progress(value, total, message):
        progress.append(message)
        if len(progress) == 1:
            write("progress.json", {"message": message, "questions": list(questions)})

    # The agent's own process: the shell tool's whole environment.
    server = StdioServerParameters(command=TICKLOOP, args=["mcp"], env=dict(os.environ))
    client = types.Implementation(name=NAME, version="1.0")
    with open(os.path.join(OUT, "mcp-stderr.txt"), "w", encoding="utf-8") as errlog:
        async with stdio_client(server, errlog=errlog) as (read, write_stream):
            async with ClientSession(read, write_stream, elicitation_callback=on_elicit,
                                     client_info=client) as session:
                await session.initialize()
                result = await session.call_tool(
                    "TickManage",
                    {"action": "input", "instance": "shell:mine", "text": "echo own-$((6*7))\r"},
                    progress_callback=on_progress,
                )
    texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    write("findings.json", {"questions": questions, "progress": progress, "result": texts,
                            "is_error": bool(result.is_error)})
    print(json.dumps({"own_client": NAME, "questions": len(questions)}))


anyio.run(main)
