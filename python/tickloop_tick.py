"""tickloop_tick: write a Tick (Tick protocol 3) in Python, standard library only.

A Tick is a terminal program that a person uses on screen and an AI agent uses
through the protocol: requests on stdin, answers and ``tick/update``
notifications on stdout, the interface on its terminal (``/dev/tty``). This
module serves the protocol from decorated functions and does what the
protocol asks of every Tick:

* each message is one whole line, written under a lock (threads never
  interleave);
* stdout is kept clean: at start fd 1 moves to a private duplicate for the
  protocol, and whatever else is printed (a stray ``print``, a library's
  output) goes to stderr, the person's screen, after a warning;
* the catalog's ``revision`` follows the tools (a hash of them, unless you
  fix one), ``mutates`` has no default, and a call with another revision
  is refused (-32004);
* ``args`` are checked against each tool's ``input_schema`` (-32602) before
  the tool runs; an exception in a tool is answered -32603 (executed);
* ``seq`` is kept for you: :meth:`Tick.update` sends the next one (never
  ``None`` data, at most 512 KiB), reads carry the last one sent;
* describe and read are answered at once on the reader thread, each call
  runs on a thread of its own; on stdin EOF the running calls finish, then
  :meth:`Tick.serve` returns; on SIGTERM the process exits at once (after
  giving the terminal back).

:class:`Tui` is the person's screen: ``/dev/tty`` in cbreak mode, a drawing
thread woken by :meth:`Tui.redraw` and by SIGWINCH (a repaint, never an
update), and keys handed to a function of yours.

It is one file on purpose: `tickloop new` writes it beside a new Tick's
program, and the shipped Python packages carry it the same way, so no
installation step is needed (Python finds a module next to the script).

Example::

    import tickloop_tick as tt

    tick = tt.Tick("example.counter", "Counter", "One integer.")
    count = 0

    @tick.state
    def state():
        return {"count": count}

    @tick.tool(mutates=True, description="Add `by` to the count.",
               input_schema={"type": "object",
                             "properties": {"by": {"type": "integer"}},
                             "additionalProperties": False})
    def add(args):
        global count
        with tick.lock:
            count += args.get("by", 1)
            tick.update(state())
        return {"count": count}

    tick.serve()
"""

import hashlib
import inspect
import json
import os
import re
import select
import signal
import sys
import threading
import time

__version__ = "0.1.0"

PROTOCOL = 3
#: Error codes (the protocol's section 3.4).
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
TOOL_FAILED = -32000
STALE_REVISION = -32004
#: The most a tick/update's params may take, encoded (section 3.5).
MAX_STATE_BYTES = 512 * 1024
#: The longest line the host sends or accepts (section 3.5).
MAX_LINE_BYTES = 8 * 1024 * 1024

__all__ = [
    "Tick", "Tool", "ToolError", "Tui", "UpdateError", "validate", "now",
    "PROTOCOL", "INVALID_PARAMS", "TOOL_FAILED", "INTERNAL_ERROR", "STALE_REVISION",
]


class ToolError(Exception):
    """An error answer to a call: raise it from a tool.

    ``ToolError.failed(msg)`` (-32000): the tool started and may have had an
    effect. ``ToolError.invalid_args(msg)`` (-32602): refused before doing
    anything (a check beyond the schema, like "no item 7").
    """

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def failed(cls, message, data=None):
        return cls(TOOL_FAILED, str(message), data)

    @classmethod
    def invalid_args(cls, message, data=None):
        return cls(INVALID_PARAMS, str(message), data)


class UpdateError(Exception):
    """An update the protocol forbids (``None`` data, over 512 KiB), or one
    that could not be written (the host is gone)."""


def now():
    """The time now, RFC 3339 in UTC (for a state's ``at``)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _encode(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class Tool:
    """One tool of the catalog: its name, description, ``input_schema``,
    whether it ``mutates`` (no default: say it), and the function run for a
    call (``fn(args)``, or ``fn(args, tick)`` when it takes two)."""

    def __init__(self, name, description, mutates, input_schema=None, fn=None):
        if not isinstance(mutates, bool):
            raise TypeError(f"tool {name!r}: mutates must be True or False")
        if not str(name).strip():
            raise ValueError("a tool's name must not be blank")
        self.name = name
        self.description = description
        self.mutates = mutates
        self.input_schema = input_schema if input_schema is not None else {
            "type": "object", "additionalProperties": False}
        if not isinstance(self.input_schema, dict):
            raise TypeError(f"tool {name!r}: input_schema must be a JSON Schema object")
        self.fn = fn

    def declared(self):
        return {"name": self.name, "description": self.description,
                "input_schema": self.input_schema, "mutates": self.mutates}


# --- argument validation: the JSON Schema keywords Ticks use -----------------

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def validate(value, schema, where="args"):
    """The first way ``value`` breaks ``schema``, as a sentence; ``None`` when
    it fits. Covers type, enum, const, required, properties,
    additionalProperties, items, min/max (and exclusive), minLength,
    maxLength, pattern, minItems, maxItems, uniqueItems, anyOf, oneOf, allOf
    and not; other keywords are not checked (the host checks every one)."""
    if schema is True or schema is None:
        return None
    if schema is False:
        return f"{where} is not allowed"
    if not isinstance(schema, dict):
        return None
    problem = _validate_type(value, schema, where)
    if problem:
        return problem
    if isinstance(value, dict):
        problem = _validate_object(value, schema, where)
    elif isinstance(value, list):
        problem = _validate_array(value, schema, where)
    elif isinstance(value, str):
        problem = _validate_string(value, schema, where)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        problem = _validate_number(value, schema, where)
    return problem or _validate_combined(value, schema, where)


def _validate_type(value, schema, where):
    declared = schema.get("type")
    if declared is not None:
        names = declared if isinstance(declared, list) else [declared]
        if not any(_TYPES.get(n, lambda v: True)(value) for n in names):
            return f"{where} must be {' or '.join(map(str, names))}, not {_encode(value)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} must be one of {_encode(schema['enum'])}, not {_encode(value)}"
    if "const" in schema and value != schema["const"]:
        return f"{where} must be {_encode(schema['const'])}"
    return None


def _validate_object(value, schema, where):
    for name in schema.get("required", []):
        if name not in value:
            return f"{where} lacks the required {name!r}"
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            problem = validate(item, properties[name], f"{where}.{name}")
        elif extra is False:
            problem = f"{where} has {name!r}, which is not one of {sorted(properties)}"
        else:
            problem = validate(item, extra, f"{where}.{name}")
        if problem:
            return problem
    return None


def _validate_array(value, schema, where):
    if len(value) < schema.get("minItems", 0):
        return f"{where} must have at least {schema['minItems']} items"
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        return f"{where} must have at most {schema['maxItems']} items"
    if schema.get("uniqueItems") and len({_encode(v) for v in value}) != len(value):
        return f"{where} must not repeat an item"
    items = schema.get("items")
    if isinstance(items, (dict, bool)):
        for i, item in enumerate(value):
            problem = validate(item, items, f"{where}[{i}]")
            if problem:
                return problem
    return None


def _validate_string(value, schema, where):
    if len(value) < schema.get("minLength", 0):
        return f"{where} must be at least {schema['minLength']} characters"
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        return f"{where} must be at most {schema['maxLength']} characters"
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            if not re.search(pattern, value):
                return f"{where} must match {pattern!r}"
        except re.error:
            return None
    return None


def _validate_number(value, schema, where):
    checks = [("minimum", lambda b: value < b, "at least"),
              ("maximum", lambda b: value > b, "at most"),
              ("exclusiveMinimum", lambda b: value <= b, "above"),
              ("exclusiveMaximum", lambda b: value >= b, "below")]
    for key, broken, words in checks:
        bound = schema.get(key)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool) and broken(bound):
            return f"{where} must be {words} {bound}, not {value}"
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0 and (value / step) % 1 != 0:
        return f"{where} must be a multiple of {step}"
    return None


def _validate_combined(value, schema, where):
    for sub in schema.get("allOf", []):
        problem = validate(value, sub, where)
        if problem:
            return problem
    if "anyOf" in schema and all(validate(value, s, where) for s in schema["anyOf"]):
        return f"{where} matches none of the allowed forms"
    if "oneOf" in schema:
        fits = sum(1 for s in schema["oneOf"] if validate(value, s, where) is None)
        if fits != 1:
            return f"{where} must match exactly one allowed form ({fits} do)"
    if "not" in schema and validate(value, schema["not"], where) is None:
        return f"{where} matches a form that is not allowed"
    return None


# --- stdout kept clean --------------------------------------------------------

class _Output:
    """The protocol's stdout: a private duplicate of fd 1, written one whole
    line at a time under a lock. fd 1 itself becomes a pipe whose bytes go
    to stderr after a warning, so stray prints never corrupt the stream."""

    def __init__(self):
        self.lock = threading.Lock()
        self.broken = False
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        self.fd = os.dup(1)
        os.set_inheritable(self.fd, False)
        read_end, write_end = os.pipe()
        os.dup2(write_end, 1)
        os.close(write_end)
        self.forwarder = threading.Thread(target=self._forward, args=(read_end,), daemon=True,
                                          name="tickloop_tick stray stdout")
        self.forwarder.start()

    def drain(self, wait):
        """Before exiting: what was printed reaches stderr. fd 1 becomes
        /dev/null (closing the pipe), and the forwarder gets up to ``wait``
        seconds to pass on the rest (a child holding fd 1 keeps it open)."""
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.close(null)
        except OSError:
            return
        self.forwarder.join(wait)

    @staticmethod
    def _forward(read_end):
        warned = False
        while True:
            try:
                chunk = os.read(read_end, 65536)
            except OSError:
                return
            if not chunk:
                return
            if not warned:
                warned = True
                _stderr(b"tickloop_tick: warning: something printed to stdout, which carries "
                        b"the protocol; it is shown here instead (print to stderr, or log "
                        b"to a file):\r\n")
            _stderr(chunk.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))

    def send(self, message):
        """Writes one message (a dict) as one line; False when the host is gone."""
        line = (_encode({"jsonrpc": "2.0", **message}) + "\n").encode()
        with self.lock:
            if self.broken:
                return False
            view = memoryview(line)
            try:
                while view:
                    written = os.write(self.fd, view)
                    view = view[written:]
            except OSError:
                self.broken = True
                return False
        return True


def _stderr(data):
    try:
        os.write(2, data)
    except OSError:
        pass


# --- the Tick -------------------------------------------------------------------

class Tick:
    """A Tick's catalog, state and tools, and the protocol loop that serves
    them (:meth:`serve`).

    ``kind`` names what it is (``"acme.orderbook"``), ``title`` is shown to
    people and models, ``description`` says what it shows and does.
    ``recover_with`` names a ``mutates=False`` tool that rebuilds what merged
    updates dropped; ``series`` lists ``(json_pointer, "first"|"last")``
    arrays of the state that are ordered in time. ``revision`` is best left
    out: it is then a hash of the tools, so it changes whenever one does; a
    fixed one (allowed for a catalog that never changes while the Tick
    runs) is yours to change with the tools (section 5.5).
    """

    def __init__(self, kind, title, description, recover_with=None, series=(), revision=None):
        if revision is not None and not str(revision):
            raise ValueError("a revision must not be empty")
        self.fixed_revision = revision
        self.kind = kind
        self.title = title
        self.description = description
        self.recover_with = recover_with
        self.series = [{"path": p, "newest": n} for p, n in series]
        self.tools = {}
        #: Held while the state changes; hold it around a change and its
        #: update so reads and updates agree (re-entrant).
        self.lock = threading.RLock()
        self._read = lambda: None
        self._seq = 0
        self._seq_lock = threading.Lock()
        self._out = None
        self._calls = []
        self._calls_lock = threading.Lock()
        self._on_exit = []

    # catalog

    def tool(self, mutates, description, input_schema=None, name=None):
        """Decorator: the function is the tool ``name`` (default: its name),
        called with the checked ``args`` dict (and the Tick, if it takes a
        second argument); what it returns is the call's result."""
        def register(fn):
            self.add_tool(Tool(name or fn.__name__, description, mutates, input_schema, fn))
            return fn
        return register

    def add_tool(self, tool):
        """Adds (or replaces) a tool; the revision follows."""
        if tool.fn is None:
            raise ValueError(f"tool {tool.name!r} has no function")
        with self.lock:
            self.tools[tool.name] = tool

    def remove_tool(self, name):
        with self.lock:
            self.tools.pop(name, None)

    def state(self, fn):
        """Decorator: the function returns the complete current state (a
        JSON value; ``None`` while there is none yet). Called for every read,
        with :attr:`lock` held: keep it quick and free of side effects."""
        self._read = fn
        return fn

    @property
    def revision(self):
        """The revision given, else a hash of the tools as declared (it
        changes whenever one does)."""
        if self.fixed_revision is not None:
            return str(self.fixed_revision)
        with self.lock:
            declared = [t.declared() for t in self.tools.values()]
        digest = hashlib.sha256(json.dumps(declared, sort_keys=True).encode()).hexdigest()
        return digest[:16]

    def descriptor(self):
        with self.lock:
            tools = [t.declared() for t in self.tools.values()]
        described = {"protocol": PROTOCOL, "kind": self.kind, "title": self.title,
                     "description": self.description, "revision": self.revision,
                     "tools": tools}
        if self.recover_with:
            described["recover_with"] = self.recover_with
        if self.series:
            described["state"] = {"series": self.series}
        return described

    # state

    @property
    def seq(self):
        """The seq of the last update sent."""
        return self._seq

    def update(self, data):
        """Sends ``data`` as the new complete state with the next seq, and
        returns that seq. Call it for business changes only (never for a
        repaint, a resize or the cursor). Raises :class:`UpdateError` for
        ``None`` data, data over 512 KiB, or when the host is gone."""
        if data is None:
            raise UpdateError("a tick/update's data must not be None (section 8.2)")
        with self._seq_lock:
            params = {"seq": self._seq + 1, "data": data, "at": now()}
            try:
                size = len(_encode(params).encode())
            except (TypeError, ValueError) as error:
                raise UpdateError(f"the state is not JSON: {error}") from error
            if size > MAX_STATE_BYTES:
                raise UpdateError(f"the state is {size} bytes encoded, over 512 KiB (section 3.5): "
                                  "keep it a summary and leave bulk to query tools")
            if self._out is None:
                # Not serving yet: the state is read at initialization anyway.
                self._seq += 1
                return self._seq
            if not self._out.send({"method": "tick/update", "params": params}):
                raise UpdateError("the host is gone (stdout closed)")
            self._seq += 1
            return self._seq

    def at_exit(self, fn):
        """Runs ``fn()`` before the process ends (SIGTERM or EOF): give the
        terminal back there. Never rely on it to save data (section 4.5)."""
        self._on_exit.append(fn)
        return fn

    # dispatch

    def handle(self, request):
        """Answers one request (a dict); the response dict, or ``None`` for a
        call started on its own thread (it answers by itself)."""
        rid, method = request.get("id"), request.get("method")
        params = request.get("params")
        params = params if isinstance(params, dict) else {}
        try:
            if method == "tick/describe":
                return {"id": rid, "result": self.descriptor()}
            if method == "tick/read":
                with self.lock:
                    with self._seq_lock:
                        seq = self._seq
                    data = self._read()
                return {"id": rid, "result": {"seq": seq, "data": data, "at": now()}}
            if method == "tick/call":
                tool, args = self._admit(params)
                worker = threading.Thread(target=self._run_call, args=(rid, tool, args),
                                          name=f"tickloop_tick call {tool.name}")
                with self._calls_lock:
                    self._calls = [t for t in self._calls if t.is_alive()] + [worker]
                worker.start()
                return None
            raise ToolError(METHOD_NOT_FOUND, f"unknown method {method!r}")
        except ToolError as error:
            return _error(rid, error)
        except Exception as error:  # a bug in the state function
            return _error(rid, ToolError(INTERNAL_ERROR, f"internal error: {error!r}"))

    def _admit(self, params):
        """The tool and args of a call, or the not-executed refusal."""
        if params.get("revision") != self.revision:
            raise ToolError(STALE_REVISION, "the tool catalog changed; describe the Tick "
                            "again and prepare the call for the new revision")
        name, args = params.get("tool"), params.get("args", {})
        with self.lock:
            tool = self.tools.get(name)
        if tool is None:
            raise ToolError(INVALID_PARAMS, f"unknown tool {name!r}; the tools are "
                            f"{sorted(self.tools)}")
        if not isinstance(args, dict):
            raise ToolError(INVALID_PARAMS, "args must be an object")
        problem = validate(args, tool.input_schema)
        if problem:
            raise ToolError(INVALID_PARAMS, f"{tool.name}: {problem}")
        return tool, args

    def _run_call(self, rid, tool, args):
        try:
            result = tool.fn(args, self) if _takes_two(tool.fn) else tool.fn(args)
            response = {"id": rid, "result": result}
            try:
                _encode(response)
            except (TypeError, ValueError) as error:
                response = _error(rid, ToolError(INTERNAL_ERROR, f"the result is not JSON: {error}"))
        except ToolError as error:
            response = _error(rid, error)
        except Exception as error:  # noqa: BLE001 - a bug after starting: executed
            import traceback
            _stderr(traceback.format_exc().replace("\n", "\r\n").encode())
            response = _error(rid, ToolError(INTERNAL_ERROR, f"{tool.name} failed: {error!r}"))
        self._out.send(response)

    # the loop

    def serve(self, stdin=None):
        """Serves the protocol on stdin/stdout until stdin ends, then waits for
        the calls still running and returns. SIGTERM ends the process at once
        (after the :meth:`at_exit` functions)."""
        self._out = _Output()
        signal.signal(signal.SIGTERM, self._terminate)
        stream = stdin if stdin is not None else sys.stdin.buffer
        while True:
            line = stream.readline(MAX_LINE_BYTES + 1)
            if not line:
                break
            try:
                request = json.loads(line)
            except ValueError:
                continue  # unparseable: discarded without a reply (section 3.2)
            if not isinstance(request, dict) or not isinstance(request.get("id"), int) \
                    or isinstance(request.get("id"), bool):
                continue
            response = self.handle(request)
            if response is not None:
                self._out.send(response)
        with self._calls_lock:
            running = list(self._calls)
        for worker in running:
            worker.join()
        self._finish(drain_wait=1.0)

    def _finish(self, drain_wait):
        for fn in reversed(self._on_exit):
            try:
                fn()
            except Exception:  # noqa: BLE001 - exiting anyway
                pass
        if self._out is not None:
            self._out.drain(drain_wait)

    def _terminate(self, *_):
        # Prompt: the host may SIGKILL at any time (section 4.5).
        self._finish(drain_wait=0.1)
        os._exit(0)


def _takes_two(fn):
    """Whether a tool function takes the Tick as well as the args."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


def _error(rid, error):
    body = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return {"id": rid, "error": body}


# --- the person's screen ----------------------------------------------------------

class Tui:
    """The person's screen: ``/dev/tty`` (stdin and stdout carry the
    protocol) in cbreak mode, drawn from a thread of its own.

    ``draw(tui)`` writes the whole screen (use :meth:`write` and
    :meth:`size`); it runs at start, after :meth:`redraw` (call it after a
    change, from any thread) and on SIGWINCH. ``on_key(key)`` gets each key
    typed, one character at a time. ``every`` (seconds) also redraws that
    often, for a screen that shows time passing. Passing ``tick`` gives the
    terminal back when the Tick ends. Without a terminal (run by a test, say)
    nothing is drawn and :attr:`available` is False.
    """

    def __init__(self, draw, on_key=None, tick=None, every=None):
        import termios
        import tty
        self._termios = termios
        self.draw_fn, self.on_key, self.every = draw, on_key, every
        self.saved = None
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        try:
            self.fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
        except OSError:
            self.fd = None
            return
        try:
            self.saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)
        except termios.error:
            pass
        if tick is not None:
            tick.at_exit(self.restore)

    @property
    def available(self):
        return self.fd is not None

    def start(self):
        """Starts the drawing thread and the SIGWINCH repaint; returns self."""
        if self.fd is not None:
            signal.signal(signal.SIGWINCH, lambda *_: self.redraw())
            threading.Thread(target=self._run, daemon=True, name="tickloop_tick tui").start()
        return self

    def size(self):
        """(columns, rows) of the terminal."""
        try:
            size = os.get_terminal_size(self.fd)
            return size.columns, size.lines
        except (OSError, TypeError):
            return 80, 24

    def write(self, text):
        if self.fd is None:
            return
        data = text.encode()
        try:
            while data:
                data = data[os.write(self.fd, data):]
        except OSError:
            pass

    def redraw(self):
        try:
            os.write(self.wake_w, b".")
        except OSError:
            pass

    def _draw(self):
        try:
            self.draw_fn(self)
        except Exception as error:  # noqa: BLE001 - keep the screen alive
            self.write(f"\r\ntickloop_tick: drawing failed: {error!r}\r\n")

    def _run(self):
        self._draw()
        while True:
            try:
                ready, _, _ = select.select([self.fd, self.wake_r], [], [], self.every)
            except InterruptedError:
                continue
            if self.wake_r in ready or not ready:
                if ready:
                    os.read(self.wake_r, 4096)
                self._draw()
            if self.fd in ready:
                try:
                    keys = os.read(self.fd, 1024)
                except OSError:
                    return
                if not keys:
                    return
                for key in keys.decode(errors="ignore"):
                    if self.on_key is not None:
                        try:
                            self.on_key(key)
                        except Exception as error:  # noqa: BLE001
                            self.write(f"\r\ntickloop_tick: key handler failed: {error!r}\r\n")

    def restore(self):
        """Shows the cursor and gives the terminal its settings back."""
        if self.fd is None or self.saved is None:
            return
        try:
            os.write(self.fd, b"\x1b[?25h")
            self._termios.tcsetattr(self.fd, self._termios.TCSADRAIN, self.saved)
        except (OSError, self._termios.error):
            pass
