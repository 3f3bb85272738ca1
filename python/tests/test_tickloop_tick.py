"""Tests of tickloop_tick: the catalog and its revision, argument checks,
and, through a real process speaking the protocol on pipes (sample_tick.py),
dispatch, error codes, seq, a clean stdout, stdin EOF and SIGTERM.

Run: `python3 -m unittest discover -s python/tests` (cargo test runs it too,
tests/python_module.rs)."""
import json
import os
import select
import signal
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import tickloop_tick as tt  # noqa: E402

SAMPLE = os.path.join(HERE, "sample_tick.py")
# A safety net against a hung process, not a measure of speed.
HANG = 60


class Compatibility(unittest.TestCase):
    def test_the_module_is_python_3_9_syntax(self):
        import ast
        with open(tt.__file__) as source:
            ast.parse(source.read(), feature_version=(3, 9))


class Catalog(unittest.TestCase):
    def test_mutates_has_no_default_and_names_must_not_be_blank(self):
        with self.assertRaises(TypeError):
            tt.Tool("t", "d", None)
        with self.assertRaises(ValueError):
            tt.Tool("  ", "d", False)
        tick = tt.Tick("k", "T", "d")
        with self.assertRaises(TypeError):
            tick.tool(mutates="yes", description="d")(lambda args: None)

    def test_revision_follows_the_tools(self):
        tick = tt.Tick("k", "T", "d")
        empty = tick.revision
        tick.tool(mutates=False, description="d")(lambda args: None)
        one = tick.revision
        self.assertNotEqual(empty, one)
        self.assertEqual(one, tick.revision)
        tick.tool(mutates=True, description="d", name="<lambda>")(lambda args: None)
        self.assertNotEqual(one, tick.revision, "mutates changed, the revision must too")
        fixed = tt.Tick("k", "T", "d", revision="7")
        fixed.tool(mutates=False, description="d")(lambda args: None)
        self.assertEqual(fixed.revision, "7")
        with self.assertRaises(ValueError):
            tt.Tick("k", "T", "d", revision="")

    def test_descriptor(self):
        tick = tt.Tick("k.x", "T", "d", recover_with="q", series=[("/recent", "last")])
        tick.tool(mutates=False, description="query", name="q")(lambda args: [])
        d = tick.descriptor()
        self.assertEqual(d["protocol"], 3)
        self.assertEqual(d["tools"][0]["mutates"], False)
        self.assertEqual(d["tools"][0]["input_schema"], {"type": "object", "additionalProperties": False})
        self.assertEqual(d["recover_with"], "q")
        self.assertEqual(d["state"], {"series": [{"path": "/recent", "newest": "last"}]})

    def test_update_refuses_none_and_oversized_state(self):
        tick = tt.Tick("k", "T", "d")
        with self.assertRaises(tt.UpdateError):
            tick.update(None)
        with self.assertRaises(tt.UpdateError):
            tick.update({"big": "x" * (600 * 1024)})
        self.assertEqual(tick.seq, 0, "a refused update must not use a seq")
        self.assertEqual(tick.update({"a": 1}), 1)


class Validate(unittest.TestCase):
    SCHEMA = {"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 1, "maximum": 5},
        "mode": {"enum": ["a", "b"]},
        "name": {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-z]+$"},
        "inner": {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"},
                                                            "maxItems": 2}},
                  "required": ["tags"], "additionalProperties": False},
        "either": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
        "required": ["n"], "additionalProperties": False}

    def test_valid_values_pass(self):
        for args in [{"n": 1}, {"n": 5, "mode": "b", "name": "abc", "inner": {"tags": ["x"]}},
                     {"n": 3, "either": None}, {"n": 2.0}]:
            self.assertIsNone(tt.validate(args, self.SCHEMA), args)

    def test_each_broken_keyword_is_named(self):
        cases = [({}, "required 'n'"), ({"n": 0}, "at least 1"), ({"n": 6}, "at most 5"),
                 ({"n": True}, "must be integer"), ({"n": 1, "mode": "c"}, "one of"),
                 ({"n": 1, "name": "a"}, "at least 2"), ({"n": 1, "name": "abcd"}, "at most 3"),
                 ({"n": 1, "name": "AB"}, "match"), ({"n": 1, "x": 1}, "'x'"),
                 ({"n": 1, "inner": {}}, "args.inner lacks"),
                 ({"n": 1, "inner": {"tags": ["a", "b", "c"]}}, "at most 2 items"),
                 ({"n": 1, "inner": {"tags": [1]}}, "args.inner.tags[0]"),
                 ({"n": 1, "either": "s"}, "none of the allowed")]
        for args, expected in cases:
            problem = tt.validate(args, self.SCHEMA)
            self.assertIsNotNone(problem, args)
            self.assertIn(expected, problem, args)


class Process:
    """sample_tick.py on pipes, in a session of its own (no terminal)."""

    def __init__(self, stderr=subprocess.PIPE, preexec_fn=None):
        self.proc = subprocess.Popen([sys.executable, SAMPLE], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=stderr,
                                     start_new_session=preexec_fn is None, preexec_fn=preexec_fn)
        self.next_id = 1
        self.updates = []

    def send(self, method, params=None):
        rid = self.next_id
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        return rid

    def answer(self, rid):
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(f"stdout ended before the answer to {rid}")
            message = json.loads(line)
            self.assert_frame(message)
            if message.get("method") == "tick/update":
                self.updates.append(message["params"])
            elif message.get("id") == rid:
                return message

    def request(self, method, params=None):
        return self.answer(self.send(method, params))

    def call(self, tool, args, revision):
        return self.request("tick/call", {"tool": tool, "args": args, "revision": revision})

    @staticmethod
    def assert_frame(message):
        assert message.get("jsonrpc") == "2.0", message
        if "id" in message:
            assert isinstance(message["id"], int), message
            assert ("result" in message) != ("error" in message), message

    def finish(self):
        """Closes stdin; the rest of stdout (every line checked) and stderr."""
        self.proc.stdin.close()
        rest = self.proc.stdout.read().decode()
        for line in rest.splitlines():
            self.assert_frame(json.loads(line))
        err = self.proc.stderr.read().decode()
        self.proc.wait(HANG)
        return rest, err

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(HANG)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


class Protocol(unittest.TestCase):
    def setUp(self):
        self.tick = Process()
        self.addCleanup(self.tick.kill)
        self.described = self.tick.request("tick/describe")["result"]
        self.revision = self.described["revision"]

    def code(self, answer):
        self.assertIn("error", answer, answer)
        return answer["error"]["code"]

    def test_describe_and_read(self):
        names = {t["name"]: t["mutates"] for t in self.described["tools"]}
        self.assertEqual(names, {"add": True, "total": False, "fail": True, "crash": False,
                                 "say": False, "wait": False})
        self.assertEqual(self.tick.request("tick/read")["result"]["seq"], 0)
        self.assertEqual(self.tick.request("tick/read")["result"]["data"], {"total": 0})

    def test_calls_updates_and_seq(self):
        first = self.tick.call("add", {"n": 2}, self.revision)["result"]
        second = self.tick.call("add", {"n": 3}, self.revision)["result"]
        self.assertEqual((first["seq"], second["seq"]), (1, 2))
        self.assertEqual([u["seq"] for u in self.tick.updates], [1, 2])
        self.assertEqual(self.tick.updates[-1]["data"], {"total": 5})
        self.assertTrue(all("at" in u for u in self.tick.updates))
        read = self.tick.request("tick/read")["result"]
        self.assertGreaterEqual(read["seq"], 2, "a read never goes below the last update")
        self.assertEqual(read["data"], {"total": 5})

    def test_refusals_are_not_executed(self):
        self.assertEqual(self.code(self.tick.call("add", {"n": 2}, "old")), tt.STALE_REVISION)
        self.assertEqual(self.code(self.tick.call("nope", {}, self.revision)), tt.INVALID_PARAMS)
        bad = self.tick.call("add", {"n": 11}, self.revision)
        self.assertEqual(self.code(bad), tt.INVALID_PARAMS)
        self.assertIn("at most 10", bad["error"]["message"])
        self.assertEqual(self.code(self.tick.call("add", [], self.revision)), tt.INVALID_PARAMS)
        self.assertEqual(self.code(self.tick.request("tick/nothing")), -32601)
        self.assertEqual(self.tick.request("tick/read")["result"]["data"], {"total": 0})
        self.assertEqual(self.tick.updates, [])

    def test_tool_failures_are_executed_errors(self):
        failed = self.tick.call("fail", {}, self.revision)
        self.assertEqual(self.code(failed), tt.TOOL_FAILED)
        self.assertEqual(failed["error"]["data"], {"free": 0})
        crashed = self.tick.call("crash", {}, self.revision)
        self.assertEqual(self.code(crashed), tt.INTERNAL_ERROR)
        self.assertIn("KeyError", crashed["error"]["message"])
        # The session goes on.
        self.assertEqual(self.tick.call("add", {"n": 1}, self.revision)["result"]["total"], 1)
        _, err = self.tick.finish()
        self.assertIn("Traceback", err)

    def test_a_stray_print_goes_to_stderr_with_a_warning(self):
        said = self.tick.call("say", {"text": "hello from a print"}, self.revision)["result"]
        self.assertEqual(said, {"said": "hello from a print", "same_tick": True})
        rest, err = self.tick.finish()
        self.assertNotIn("hello from a print", rest)
        self.assertIn("warning", err)
        self.assertIn("hello from a print", err)

    def test_unparseable_lines_and_lines_without_an_id_are_discarded(self):
        self.tick.proc.stdin.write(b"not json\n{\"jsonrpc\":\"2.0\",\"method\":\"tick/read\"}\n[1]\n")
        self.tick.proc.stdin.flush()
        self.assertEqual(self.tick.request("tick/read")["result"]["seq"], 0)
        rest, _ = self.tick.finish()
        self.assertEqual(rest, "", "nothing answered the discarded lines")

    def test_stdin_eof_waits_for_the_calls_in_flight_then_exits(self):
        with tempfile.TemporaryDirectory() as scratch:
            fifo = os.path.join(scratch, "release")
            os.mkfifo(fifo)
            rid = self.tick.send("tick/call", {"tool": "wait", "args": {"fifo": fifo},
                                               "revision": self.revision})
            # The reader thread still answers while the call waits.
            self.assertIn("result", self.tick.request("tick/read"))
            self.tick.proc.stdin.close()
            with open(fifo, "w") as release:
                release.write("go")
            answer = self.tick.answer(rid)
            self.assertEqual(answer["result"], {"got": "go"})
            self.assertEqual(self.tick.proc.wait(HANG), 0)
            self.assertIn("exiting", self.tick.proc.stderr.read().decode())

    def test_sigterm_with_stdin_open_exits_after_the_exit_functions(self):
        os.killpg(self.tick.proc.pid, signal.SIGTERM)
        self.assertEqual(self.tick.proc.wait(HANG), 0)
        self.assertIn("exiting", self.tick.proc.stderr.read().decode())
        self.assertFalse(self.tick.proc.stdin.closed, "stdin was open all along")


class OnATerminal(unittest.TestCase):
    """sample_tick.py as a host runs it: leader of a new session whose
    controlling terminal is a PTY (stderr its slave), protocol on pipes."""

    def setUp(self):
        import fcntl
        import termios
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))

        def controlling_terminal():
            os.setsid()
            fcntl.ioctl(2, termios.TIOCSCTTY, 0)

        self.tick = Process(stderr=slave, preexec_fn=controlling_terminal)
        os.close(slave)
        self.addCleanup(self.tick.kill)
        self.addCleanup(os.close, self.master)
        self.screen = b""

    def wait_screen(self, text):
        """Reads the PTY until `text` shows (the drawing thread's output)."""
        while text.encode() not in self.screen:
            ready, _, _ = select.select([self.master], [], [], HANG)
            self.assertTrue(ready, f"{text!r} never showed; the screen: {self.screen[-400:]!r}")
            self.screen += os.read(self.master, 65536)
        self.screen = self.screen[self.screen.index(text.encode()) + len(text):]

    def test_draws_takes_keys_and_repaints_on_resize_without_an_update(self):
        import fcntl
        import termios
        revision = self.tick.request("tick/describe")["result"]["revision"]
        self.wait_screen("total 0 size 120x30")
        os.write(self.master, b"+")
        self.wait_screen("total 1 size 120x30")
        self.assertEqual(self.tick.request("tick/read")["result"]["seq"], 1)
        self.assertEqual([u["data"] for u in self.tick.updates], [{"total": 1}])
        # A resize: SIGWINCH, a repaint at the new size, and no update.
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", 35, 90, 0, 0))
        self.wait_screen("total 1 size 90x35")
        self.assertEqual(self.tick.request("tick/read")["result"]["seq"], 1)
        # An agent's change shows on the screen too (the tool redraws after).
        self.tick.call("add", {"n": 2}, revision)
        os.write(self.master, b"+")
        self.wait_screen("total 4 size 90x35")
        # The update was written before the repaint, so before this answer.
        self.assertEqual(self.tick.request("tick/read")["result"]["seq"], 3)
        self.assertEqual([u["seq"] for u in self.tick.updates], [1, 2, 3])


class Screen(unittest.TestCase):
    def test_without_a_terminal_nothing_is_drawn(self):
        code = ("import sys; sys.path.insert(0, sys.argv[1]); import tickloop_tick as tt; "
                "t = tt.Tui(lambda tui: print('drawn')); print(t.available, t.start() is t, t.size())")
        out = subprocess.run([sys.executable, "-c", code, os.path.join(HERE, "..")],
                             capture_output=True, text=True, start_new_session=True, timeout=HANG)
        self.assertEqual(out.stdout.strip(), "False True (80, 24)", out.stderr)


if __name__ == "__main__":
    unittest.main()
