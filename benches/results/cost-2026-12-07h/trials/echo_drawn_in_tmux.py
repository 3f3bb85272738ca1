"""A person's shells attached with `tickloop attach` inside tmux (a real
terminal), the echo now drawn by the launcher on the view's terminal:
bash, zsh (coloured prompt) and fish (its own colours as you type). Each
command is typed a key at a time; after each, tmux's screen must be
`tickloop screen`'s, row for row. Then the prefix's `?` list and typing
(a key ends it),
long output, and a detach followed by typing from the CLI (`tickloop keys`):
nothing may be drawn on the person's terminal after the view left."""
import os, sys, subprocess, tempfile, time
BIN = sys.argv[1]
rt = tempfile.mkdtemp(prefix="tltrial5"); home = tempfile.mkdtemp(prefix="tlhome")
env = dict(os.environ, TICKLOOP_RUNTIME_DIR=rt, TERM="xterm-256color", HOME=home, PS1="$ ")
env.pop("TMUX", None)
def run(*a, check=True): return subprocess.run([BIN, *a], env=env, capture_output=True, text=True, check=check)
T = ["tmux", "-L", "trial5", "-f", "/dev/null"]
def tmux(*a): return subprocess.run(T + list(a), env=env, capture_output=True, text=True)
def pane(): return tmux("capture-pane", "-p", "-t", "p").stdout.rstrip("\n").split("\n")
def compare(tag, sid, rows_of_view):
    time.sleep(0.4)
    shown = pane()[:rows_of_view]
    screen = run("screen", sid).stdout.rstrip("\n").split("\n")
    n = max(len(shown), len(screen))
    shown += [""] * (n - len(shown)); screen += [""] * (n - len(screen))
    bad = [(i, a.rstrip(), b.rstrip()) for i, (a, b) in enumerate(zip(shown, screen)) if a.rstrip() != b.rstrip()]
    print(f"{tag}: {n - len(bad)}/{n} rows as `tickloop screen` has them")
    for i, a, b in bad[:6]:
        print(f"  row {i}: view {a!r}\n         screen {b!r}")
def typed(text):
    for ch in text:
        tmux("send-keys", "-t", "p", "-l", ch); time.sleep(0.03)
shells = {
    "bash": ["bash", "--norc", "--noprofile"],
    "zsh": ["zsh", "-f", "-c", "PROMPT='%F{green}%n%f:%F{blue}%~%f%# ' exec zsh -f -i"],
    "fish": ["fish", "--no-config"],
}
for name, argv in shells.items():
    sid = f"shell:{name}"
    run("open", "--shell", "--id", name, "--", *argv)
    run("wait", sid, "--prompt", "--timeout", "30", check=False)
    tmux("kill-server")
    tmux("new-session", "-d", "-x", "100", "-y", "25", "-s", "p", f"{BIN} attach {sid}")
    time.sleep(0.5)
    typed("echo typed right after attaching")  # the note after attaching goes at the first key
    compare(f"{name}, typed right after attaching", sid, 25)
    time.sleep(3)
    typed(" and after")
    compare(f"{name}, typed after it", sid, 25)
    tmux("send-keys", "-t", "p", "Enter")
    run("wait", sid, "--prompt", "--timeout", "30", check=False)
    typed("seq 1 40")
    tmux("send-keys", "-t", "p", "Enter")
    run("wait", sid, "--prompt", "--timeout", "30", check=False)
    compare(f"{name}, seq 1 40 (scrolled)", sid, 25)
    typed("ls --color=always /usr | head -5")
    tmux("send-keys", "-t", "p", "Enter")
    run("wait", sid, "--prompt", "--timeout", "30", check=False)
    compare(f"{name}, coloured ls", sid, 25)
    # The prefix's `?`: the keys on the last row, typing goes on under it.
    tmux("send-keys", "-t", "p", "C-\\", "?"); time.sleep(0.2)
    typed("echo under the keys")
    last = pane()[-1]
    print(f"{name}, `?` then typing: last row {last.strip()[:60]!r}")
    compare(f"{name}, typed after `?` (the key list gone at the first key)", sid, 25)
    tmux("send-keys", "-t", "p", "C-u"); time.sleep(0.2)
    # Detach, then type from the CLI: the person's terminal stays as it was.
    tmux("respawn-pane", "-k", "-t", "p", "bash --norc --noprofile")
    time.sleep(0.3)
    tmux("send-keys", "-t", "p", "-l", f"clear; {BIN} attach {sid}"); tmux("send-keys", "-t", "p", "Enter")
    time.sleep(1.0)
    tmux("send-keys", "-t", "p", "C-\\", "d"); time.sleep(0.6)
    before = pane()
    rcs = [run("keys", sid, ch, check=False).returncode for ch in "xyz"]
    time.sleep(0.3)
    on_screen = run("screen", sid).stdout.rstrip().split("\n")[-1]
    print(f"{name}, `tickloop keys` x y z after the detach: exit {rcs}; the shell's line now {on_screen.strip()[-20:]!r}")
    time.sleep(0.4)
    after = pane()
    print(f"{name}, keys typed from the CLI after the detach: person's terminal {'unchanged' if before == after else 'CHANGED'}")
    if before != after:
        print("  before", before[-4:], "\n  after", after[-4:])
    tmux("kill-server")
run("shutdown", check=False)
