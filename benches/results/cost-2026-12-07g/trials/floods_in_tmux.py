"""A person's bash attached through `tickloop attach` inside tmux (a real
terminal), typing floods of output (`seq`, termbench's 64 MiB of coloured
text, `ls --color`): after each, tmux's screen must show what `tickloop
screen` says, row for row."""
import os, sys, subprocess, tempfile, time
BIN = sys.argv[1]
rt = tempfile.mkdtemp(prefix="tltrial3"); home = tempfile.mkdtemp(prefix="tlhome")
env = dict(os.environ, TICKLOOP_RUNTIME_DIR=rt, TERM="xterm-256color", HOME=home, PS1="$ ")
def run(*a, check=True): return subprocess.run([BIN, *a], env=env, capture_output=True, text=True, check=check)
T = ["tmux", "-L", "trial3", "-f", "/dev/null"]
def tmux(*a): return subprocess.run(T + list(a), env=env, capture_output=True, text=True)
run("open", "--shell", "--id", "b", "--", "bash")
run("wait", "shell:b", "--prompt", "--timeout", "20")
tmux("new-session", "-d", "-x", "120", "-y", "31", "-s", "p", f"{BIN} attach shell:b")
time.sleep(4)  # past the note
def compare(tag, command):
    t0 = time.time()
    tmux("send-keys", "-t", "p", "-l", command)
    tmux("send-keys", "-t", "p", "Enter")
    time.sleep(0.5)
    run("wait", "shell:b", "--prompt", "--timeout", "120")
    time.sleep(0.3)
    shown = tmux("capture-pane", "-p", "-t", "p").stdout.rstrip("\n").split("\n")
    screen = run("screen", "shell:b").stdout.rstrip("\n").split("\n")
    n = max(len(shown), len(screen))
    shown += [""] * (n - len(shown)); screen += [""] * (n - len(screen))
    same = [a.rstrip() == b.rstrip() for a, b in zip(shown, screen)]
    print(f"{tag}: {time.time()-t0:.1f} s; {sum(same)}/{n} rows as `tickloop screen` has them; last rows: {[r.strip()[:40] for r in shown[-3:]]}")
    for i, (a, b) in enumerate(zip(shown, screen)):
        if a.rstrip() != b.rstrip():
            print(f"  row {i}: view {a.rstrip()!r}\n         screen {b.rstrip()!r}")
compare("seq", "seq 1 300000")
compare("64 MiB", f"cat {sys.argv[2]}")
compare("ls", "ls --color=always -la /usr/lib | head -60")
compare("seq again", "seq 1 100000 | tail -5")
colored = tmux("capture-pane", "-p", "-e", "-t", "p").stdout
print("colours on tmux's screen:", "[" in colored)
tmux("send-keys", "-t", "p", "C-\\", "d")
time.sleep(1)
print("client after detach:", tmux("list-panes", "-t", "p", "-F", "#{pane_dead} #{pane_current_command}").stdout.strip() or "session gone (the client ended)")
tmux("kill-server")
run("shutdown", check=False)
