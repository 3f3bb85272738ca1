#!/usr/bin/env python3
"""What a process can see of who started it: the probe of tests/host_origin.rs
(issue 49), run inside the real agent CLIs as their MCP server, as their hook
and by their shell tool, in the same session.

    probe.py mcp OUT LABEL      record, then serve a minimal MCP server on stdio
    probe.py hook OUT LABEL     record (with the hook's stdin), print nothing
    probe.py shell OUT LABEL    record, exit
    probe.py client OUT LABEL   record, then start `probe.py mcp OUT LABEL/child`
                                with pipes and initialize it, as an agent's own
                                MCP client started from its shell tool would

Each record is one JSON line appended to OUT: the process itself and every
ancestor up to pid 1 (executable, comm, cmdline, the environment's names and
the agent markers' values, process group, session, controlling terminal,
no_new_privs, seccomp, namespaces, cgroup), and what fds 0, 1 and 2 are, with
every process that holds the same pipe or socket.
"""

import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import time

# Variables whose values are kept (the rest are kept by name only).
KEEP = ("CLAUDE", "CODEX", "GEMINI", "OPENCODE", "AI_AGENT", "AGENT",
        "TICKLOOP", "SHLVL", "TERM", "TMUX", "_", "NODE_OPTIONS", "BUN")


def read(path, binary=False):
    try:
        with open(path, "rb") as f:
            data = f.read()
        return data if binary else data.decode("utf-8", "replace")
    except OSError as e:
        return OSError(f"{type(e).__name__}: {e.strerror}")


def link(path):
    try:
        return os.readlink(path)
    except OSError as e:
        return f"<{e.strerror}>"


def stat_fields(pid):
    text = read(f"/proc/{pid}/stat")
    if isinstance(text, OSError):
        return {}
    # comm may hold spaces and parentheses: split after the last ")".
    rest = text[text.rindex(")") + 2:].split()
    return {"state": rest[0], "ppid": int(rest[1]), "pgid": int(rest[2]),
            "sid": int(rest[3]), "tty_nr": int(rest[4]), "tpgid": int(rest[5])}


def status_fields(pid):
    text = read(f"/proc/{pid}/status")
    if isinstance(text, OSError):
        return {}
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("Uid", "NoNewPrivs", "Seccomp", "CapEff", "NSpid"):
            out[key] = value.strip()
    return out


def environ(pid):
    data = read(f"/proc/{pid}/environ", binary=True)
    if isinstance(data, OSError):
        return {"error": str(data)}
    names, kept = [], {}
    for item in data.split(b"\0"):
        if not item:
            continue
        name, _, value = item.decode("utf-8", "replace").partition("=")
        names.append(name)
        if name.startswith(KEEP):
            kept[name] = value
    return {"names": sorted(names), "values": kept}


def text_or_none(text):
    return None if isinstance(text, OSError) else text.strip()


def proc(pid):
    cmdline = read(f"/proc/{pid}/cmdline", binary=True)
    return {
        "pid": pid,
        "comm": text_or_none(read(f"/proc/{pid}/comm")),
        "exe": link(f"/proc/{pid}/exe"),
        "cmdline": None if isinstance(cmdline, OSError)
        else [a.decode("utf-8", "replace")[:200] for a in cmdline.split(b"\0")[:12] if a],
        "stat": stat_fields(pid),
        "status": status_fields(pid),
        "environ": environ(pid),
        "ns": {n: link(f"/proc/{pid}/ns/{n}") for n in ("mnt", "pid", "net", "user", "ipc", "uts")},
        "cgroup": text_or_none(read(f"/proc/{pid}/cgroup")),
    }


def holders(target, me):
    """Every other process with an fd on `target` (pipe:[N], socket:[N])."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for fd in fds:
            if link(f"/proc/{entry}/fd/{fd}") == target:
                flags = read(f"/proc/{entry}/fdinfo/{fd}")
                mode = None
                if not isinstance(flags, OSError):
                    for line in flags.splitlines():
                        if line.startswith("flags:"):
                            acc = int(line.split()[1], 8) & 3
                            mode = {0: "r", 1: "w", 2: "rw"}.get(acc)
                comm = read(f"/proc/{entry}/comm")
                found.append({"pid": int(entry), "fd": int(fd), "mode": mode,
                              "comm": comm.strip() if isinstance(comm, str) else None})
    return found


def fds(me):
    out = {}
    for fd in sorted(int(f) for f in os.listdir("/proc/self/fd")):
        target = link(f"/proc/self/fd/{fd}")
        if target.startswith("/proc/") and str(me) not in target:
            continue  # the listing's own descriptor
        entry = {"target": target}
        if fd <= 2:
            try:
                entry["flags"] = oct(fcntl.fcntl(fd, fcntl.F_GETFL))
            except OSError as e:
                entry["flags"] = str(e)
            entry["isatty"] = os.isatty(fd)
            if target.startswith(("pipe:", "socket:")):
                entry["holders"] = holders(target, me)
            if target.startswith("socket:"):
                entry["peer"] = peer(fd)
        out[fd] = entry
    return out


def peer(fd):
    """SO_PEERCRED of a Unix socket: the process that connected, or made
    the pair."""
    try:
        sock = socket.socket(fileno=os.dup(fd))
    except OSError as e:
        return str(e)
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid, uid, gid = struct.unpack("3i", raw)
        comm = read(f"/proc/{pid}/comm")
        return {"pid": pid, "uid": uid, "comm": comm.strip() if isinstance(comm, str) else None,
                "family": sock.family.name, "type": sock.type.name}
    except OSError as e:
        return str(e)
    finally:
        sock.close()


def controlling_tty():
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
        os.close(fd)
        return "yes"
    except OSError as e:
        return f"no ({e.strerror})"


def facts(mode, label, extra=None):
    me = os.getpid()
    chain, pid = [], os.getppid()
    while pid > 0:
        info = proc(pid)
        chain.append(info)
        pid = info["stat"].get("ppid", 0) if info["stat"] else 0
        if pid == 1:
            chain.append(proc(1))
            break
    record = {
        "label": label,
        "mode": mode,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "self": proc(me),
        "fds": fds(me),
        "controlling_tty": controlling_tty(),
        "ancestors": chain,
    }
    if extra:
        record.update(extra)
    return record


def append(out, record):
    line = json.dumps(record, default=str) + "\n"
    with open(out, "a", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(line)


def serve_mcp():
    """Enough MCP for a host to start the server and list its (no) tools."""
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if "id" not in msg or "method" not in msg:
            continue
        method = msg["method"]
        if method == "initialize":
            version = msg.get("params", {}).get("protocolVersion", "2025-06-18")
            result = {"protocolVersion": version, "capabilities": {"tools": {}},
                      "serverInfo": {"name": "origin-probe", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": []}
        elif method in ("resources/list", "prompts/list"):
            result = {method.split("/")[0]: []}
        elif method == "ping":
            result = {}
        else:
            reply = {"jsonrpc": "2.0", "id": msg["id"],
                     "error": {"code": -32601, "message": f"no {method}"}}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        sys.stdout.flush()


def client(out, label):
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "mcp", out, f"{label}/child"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25",
                        "capabilities": {"elicitation": {"form": {}}},
                        "clientInfo": {"name": "claude-code", "version": "9"}}}
    child.stdin.write((json.dumps(hello) + "\n").encode())
    child.stdin.flush()
    answer = child.stdout.readline()
    child.stdin.close()
    child.wait()
    return json.loads(answer) if answer else None


def main():
    mode, out, label = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "hook":
        data = sys.stdin.read()
        append(out, facts(mode, label, {"stdin": data[:4000]}))
    elif mode == "mcp":
        append(out, facts(mode, label))
        serve_mcp()
    elif mode == "client":
        record = facts(mode, label)
        append(out, record)
        answered = client(out, label)
        print(json.dumps({"probe": label, "child_answered": bool(answered)}))
    else:
        append(out, facts(mode, label))
        print(json.dumps({"probe": label, "recorded": True}))


if __name__ == "__main__":
    main()
