"""A person's shells attached with `tickloop attach` inside tmux (a real
terminal), the keys now read by the launcher while the view lends them:
bash, zsh (coloured prompt) and fish. Each step is typed as a person types
(a key at a time, or a burst as a paste of keys), then tmux's screen is
compared with `tickloop screen`, row for row: a command typed, Up recalling
it (an escape sequence: given back to the view), Tab completing, ctrl+C at a
prompt, a line typed fast, a password read with echo off (what was typed
must not be in the launcher's log or activity), long output, `?` after the
prefix, then a detach and keys typed in the person's own shell at once:
they must reach that shell and not the Tick."""
import os, sys, subprocess, tempfile, time
BIN = sys.argv[1]
rt = tempfile.mkdtemp(prefix="tltrial6"); home = tempfile.mkdtemp(prefix="tlhome")
env = dict(os.environ, TICKLOOP_RUNTIME_DIR=rt, TERM="xterm-256color", HOME=home, PS1="$ ")
env.pop("TMUX", None)
def run(*a, check=True): return subprocess.run([BIN, *a], env=env, capture_output=True, text=True, check=check)
T = ["tmux", "-L", "trial6", "-f", "/dev/null"]
def tmux(*a): return subprocess.run(T + list(a), env=env, capture_output=True, text=True)
def pane(): return tmux("capture-pane", "-p", "-t", "p").stdout.rstrip("\n").split("\n")
def compare(tag, sid, rows_of_view=25):
    time.sleep(0.4)
    shown = pane()[:rows_of_view]
    screen = run("screen", sid).stdout.rstrip("\n").split("\n")
    n = max(len(shown), len(screen))
    shown += [""] * (n - len(shown)); screen += [""] * (n - len(screen))
    bad = [(i, a.rstrip(), b.rstrip()) for i, (a, b) in enumerate(zip(shown, screen)) if a.rstrip() != b.rstrip()]
    print(f"{tag}: {n - len(bad)}/{n} rows as `tickloop screen` has them")
    for i, a, b in bad[:6]:
        print(f"  row {i}: view {a!r}\n         screen {b!r}")
def typed(text, gap=0.03):
    for ch in text:
        tmux("send-keys", "-t", "p", "-l", ch); time.sleep(gap)
def keys(*k): tmux("send-keys", "-t", "p", *k)
def prompt(sid): run("wait", sid, "--prompt", "--timeout", "30", check=False)
def last_line(sid): return run("screen", sid).stdout.rstrip().split("\n")[-1].strip()
shells = {
    "bash": ["bash", "--norc", "--noprofile"],
    "zsh": ["zsh", "-f", "-c", "PROMPT='%F{green}%n%f:%F{blue}%~%f%# ' exec zsh -f -i"],
    "fish": ["fish", "--no-config"],
}
for name, argv in shells.items():
    sid = f"shell:{name}"
    run("open", "--shell", "--id", name, "--", *argv)
    prompt(sid)
    tmux("kill-server")
    tmux("new-session", "-d", "-x", "100", "-y", "25", "-s", "p", f"{BIN} attach {sid}")
    time.sleep(3.5)  # after the note: the keys are lent
    typed("echo one two"); keys("Enter"); prompt(sid)
    compare(f"{name}, a command typed a key at a time", sid)
    keys("Up"); time.sleep(0.3)
    print(f"{name}, Up: the last line is {last_line(sid)[-16:]!r}")
    typed(" three"); keys("Enter"); prompt(sid)
    compare(f"{name}, Up then typed on (keys back to the view, then lent again)", sid)
    time.sleep(1.2)
    typed("ech"); keys("Tab"); time.sleep(0.3); typed(" tabbed"); keys("Enter"); prompt(sid)
    compare(f"{name}, Tab completing", sid)
    typed("sleep 30"); keys("Enter"); time.sleep(0.5); keys("C-c"); prompt(sid)
    typed("echo after ctrl+c"); keys("Enter"); prompt(sid)
    compare(f"{name}, ctrl+C stopped sleep", sid)
    keys("-l", "echo fast burst of keys typed at once"); keys("Enter"); prompt(sid)
    compare(f"{name}, a burst", sid)
    if name != "fish":
        typed("read -s -p 'pw: ' pw; echo; echo got ${#pw}"); keys("Enter"); time.sleep(0.5)
    else:
        typed("read -s -P 'pw: ' pw; echo got (string length $pw)"); keys("Enter"); time.sleep(0.5)
    typed("hunter2secret"); keys("Enter"); prompt(sid)
    log = open(f"{rt}/i/shell-{name}/launcher.log").read()
    act = run("activity", sid, check=False).stdout
    print(f"{name}, a password typed with echo off: in the launcher's log {'hunter2secret' in log}, in the activity {'hunter2secret' in act}; the shell says {last_line(sid)[-12:]!r}")
    typed("seq 1 60"); keys("Enter"); prompt(sid)
    compare(f"{name}, seq 1 60 (scrolled)", sid)
    keys("C-\\", "?"); time.sleep(0.2)
    typed("echo under the keys")
    compare(f"{name}, typed after `?` (the list gone at the first key)", sid)
    keys("C-u"); time.sleep(0.2)
    # Detach, then type in the person's own shell at once.
    tmux("respawn-pane", "-k", "-t", "p", "bash --norc --noprofile")
    time.sleep(0.3)
    keys("-l", f"clear; {BIN} attach {sid}; echo ATTACH-EXIT $?"); keys("Enter")
    time.sleep(3.5)
    typed("echo lent")
    keys("C-\\", "d"); keys("-l", "echo typed-at-once-after-detach"); keys("Enter"); time.sleep(0.8)
    outer = "\n".join(pane())
    tick = run("screen", sid).stdout
    print(f"{name}, keys typed right after the detach: in the person's shell {'typed-at-once-after-detach' in outer and 'ATTACH-EXIT 0' in outer}; in the Tick {'typed-at-once-after-detach' in tick}")
    tmux("kill-server")
run("shutdown", check=False)
