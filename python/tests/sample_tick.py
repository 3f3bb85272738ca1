#!/usr/bin/env python3
"""A Tick on tickloop_tick for the module's tests: `add` changes the state,
`fail` and `crash` fail in the two ways a tool can, `say` prints to stdout
(a stray print), `wait` blocks until its FIFO is written, and `at_exit`
writes `exiting` to stderr. On a terminal its screen shows
`total N size COLSxROWS`, and the key `+` adds one."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tickloop_tick as tt  # noqa: E402

tick = tt.Tick("test.sample", "Sample", "The module's test Tick.", recover_with="total")
total = 0


@tick.state
def state():
    return {"total": total}


@tick.tool(mutates=True, description="Add n.",
           input_schema={"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 10}},
                         "required": ["n"], "additionalProperties": False})
def add(args):
    global total
    with tick.lock:
        total += args["n"]
        seq = tick.update(state())
    return {"total": total, "seq": seq}


@tick.tool(mutates=False, name="total", description="The total.")
def total_tool(args):
    return {"total": total}


@tick.tool(mutates=True, description="Fails after starting.")
def fail(args):
    raise tt.ToolError.failed("the disk is full", {"free": 0})


@tick.tool(mutates=False, description="Has a bug.")
def crash(args):
    return {}["missing"]


@tick.tool(mutates=False, description="Prints text to stdout.",
           input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
def say(args, the_tick):
    print(args["text"])
    sys.stdout.flush()
    return {"said": args["text"], "same_tick": the_tick is tick}


@tick.tool(mutates=False, description="Blocks until the FIFO is written.",
           input_schema={"type": "object", "properties": {"fifo": {"type": "string"}}, "required": ["fifo"]})
def wait(args):
    with open(args["fifo"]) as fifo:
        return {"got": fifo.read()}


@tick.at_exit
def exiting():
    os.write(2, b"exiting\n")


def draw(tui):
    cols, rows = tui.size()
    tui.write(f"\x1b[2J\x1b[Htotal {total} size {cols}x{rows}\r\n")


def on_key(key):
    if key == "+":
        add({"n": 1})
        screen.redraw()


screen = tt.Tui(draw, on_key, tick)

if __name__ == "__main__":
    screen.start()
    tick.serve()
