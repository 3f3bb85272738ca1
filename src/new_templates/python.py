#!/usr/bin/env python3
"""{{TITLE}}: a Tick (Tick protocol 3) on the tickloop_tick module.

Made by `tickloop new`. It keeps one list of notes that the person (keys:
`n` adds a note, `c` clears them) and the agent (tools `add_note`,
`clear`; `notes` reads them all) share. `tickloop_tick.py` (beside this
file, standard library only) serves the protocol: whole lines on stdout,
stray prints moved to stderr, the revision, argument checks against each
input_schema, seq, SIGTERM and stdin EOF. Every change sends one complete
update, and nothing else does (not a repaint, not a resize).
Check it with `tickloop check --allow-mutating -- ./{{NAME}}.py`.
"""
import tickloop_tick as tt

tick = tt.Tick("local.{{NAME}}", "{{TITLE}}",
               "Notes shared by the person (keys n, c) and the agent.")
notes = []  # {"text", "by"}


@tick.state
def state():
    return {"count": len(notes), "last": notes[-5:]}


def changed():
    """Called with tick.lock held, after a change: one update, one redraw."""
    tick.update(state())
    screen.redraw()


@tick.tool(mutates=True, description="Add a note with `text`; answers how many notes there are.",
           input_schema={"type": "object",
                         "properties": {"text": {"type": "string", "minLength": 1}},
                         "required": ["text"], "additionalProperties": False})
def add_note(args):
    with tick.lock:
        notes.append({"text": args["text"], "by": "agent"})
        changed()
        return {"count": len(notes)}


@tick.tool(mutates=True, description="Remove every note.")
def clear(args):
    with tick.lock:
        notes.clear()
        changed()
        return {"count": 0}


# A tool's name is its function's, unless `name` says otherwise.
@tick.tool(mutates=False, name="notes", description="Every note, oldest first, with who added it.")
def all_notes(args):
    with tick.lock:
        return {"notes": list(notes)}


def draw(tui):
    with tick.lock:
        shown = list(notes[-20:])
        count = len(notes)
    out = ["\x1b[?25l\x1b[H\x1b[2J\x1b[1m {{TITLE}} \x1b[0m",
           f"  {count} notes   keys: n add a note, c clear\r\n\r\n"]
    out += [f"  - {n['text']}  ({n['by']})\r\n" for n in shown]
    tui.write("".join(out))


def on_key(key):
    with tick.lock:
        if key == "n":
            notes.append({"text": f"note {len(notes) + 1}", "by": "person"})
            changed()
        elif key == "c":
            notes.clear()
            changed()


screen = tt.Tui(draw, on_key, tick)

if __name__ == "__main__":
    screen.start()
    tick.serve()
