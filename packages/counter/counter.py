#!/usr/bin/env python3
"""Counter: a small Tick (Tick protocol 3) with a live screen, on tickloop_tick.

One integer shared by the person at the terminal (keys `+`, `-`, `r`) and the
agent (tools `increment`, `reset`; `history` is the recover_with query). The
module `tickloop_tick` (beside this file) serves the protocol: framing, the
catalog's revision, argument checks, seq; every change here sends one
complete update and redraws the screen.
"""
import sys

# No __pycache__ beside the package (the build embeds this folder).
sys.dont_write_bytecode = True
import tickloop_tick as tt  # noqa: E402

HISTORY_LEN = 256
RECENT_IN_STATE = 10

tick = tt.Tick("tickloop.counter", "Counter",
               "One integer that the person (keys + - r) and the agent (increment, reset) share.",
               recover_with="history", series=[("/recent", "last")],
               # Fixed, as documented in SKILL.md: change it with the tools.
               revision="1")
value = 0
history = []  # {"seq", "value", "by", "at"}, newest last


@tick.state
def state_data():
    return {"value": value, "changes": len(history),
            "recent": [{"seq": h["seq"], "value": h["value"], "by": h["by"]}
                       for h in history[-RECENT_IN_STATE:]]}


def change(new_value, by):
    """Sets the value, records it and sends the update; returns the new value."""
    global value
    with tick.lock:
        value = new_value
        history.append({"seq": tick.seq + 1, "value": value, "by": by, "at": tt.now()})
        del history[:-HISTORY_LEN]
        tick.update(state_data())
    screen.redraw()
    return new_value


NO_ARGS = {"type": "object", "additionalProperties": False}


@tick.tool(mutates=True,
           description="Add `amount` (default 1, may be negative) to the counter; answers the new value.",
           input_schema={"type": "object", "properties": {"amount": {"type": "integer"}},
                         "additionalProperties": False})
def increment(args):
    with tick.lock:
        return {"value": change(value + args.get("amount", 1), "agent")}


@tick.tool(mutates=True, description="Set the counter back to 0; answers the new value.",
           input_schema=NO_ARGS)
def reset(args):
    return {"value": change(0, "agent")}


@tick.tool(mutates=False, name="history",
           description="The last 256 changes (seq, value, by whom, when), oldest first.",
           input_schema=NO_ARGS)
def history_tool(args):
    with tick.lock:
        return {"changes": list(history)}


def draw(tui):
    cols, rows = tui.size()
    with tick.lock:
        v, s, recent = value, tick.seq, history[-max(rows - 9, 0):]
    width = max(min(cols, 60) - 2, 20)
    out = ["\x1b[?25l\x1b[H\x1b[2J",
           "\x1b[1m Counter \x1b[0m" + f"  seq {s}".rjust(width - 8) + "\r\n",
           "\u250c" + "\u2500" * width + "\u2510\r\n",
           "\u2502" + f"\x1b[1m{v:^{width}}\x1b[0m" + "\u2502\r\n",
           "\u2514" + "\u2500" * width + "\u2518\r\n",
           " keys: + add 1   - subtract 1   r reset\r\n", "\r\n"]
    for h in reversed(recent):
        out.append(f"  #{h['seq']:<5} {h['value']:>8}   by {h['by']:<6} {h['at']}"[:cols] + "\r\n")
    tui.write("".join(out))


def on_key(key):
    with tick.lock:
        if key == "+":
            change(value + 1, "person")
        elif key == "-":
            change(value - 1, "person")
        elif key in "rR":
            change(0, "person")


screen = tt.Tui(draw, on_key, tick)

if __name__ == "__main__":
    screen.start()
    tick.serve()
