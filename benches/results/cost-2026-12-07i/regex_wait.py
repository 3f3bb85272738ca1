"""A `wait --text REGEX` while the program floods its terminal: a shell
instance runs `seq 1 2000000` (14 MB) once told to, then prints DONE-7;
`tickloop wait --text 'DONE-[0-9]'` waits from before the flood, so the
launcher matches the regex on every line that arrives. Prints the time
from the go to the wait's answer, each executable in turn, three rounds.

Run: python3 regex_wait.py BIN...
"""
import os, sys, subprocess, tempfile, time


def once(BIN):
    rt = tempfile.mkdtemp(prefix="rxw")
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=rt)
    subprocess.run([BIN, "open", "--shell", "--id", "f", "--", "sh", "-c",
                    "read x; seq 1 2000000; echo DONE-7; sleep 100"], env=env, capture_output=True, check=True)
    w = subprocess.Popen([BIN, "wait", "shell:f", "--text", "DONE-[0-9]", "--timeout", "120"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    t0 = time.perf_counter()
    subprocess.run([BIN, "input", "shell:f", "go\n"], env=env, capture_output=True)
    w.wait()
    t = time.perf_counter() - t0
    subprocess.run([BIN, "shutdown"], env=env, capture_output=True)
    return t, w.returncode


for r in range(3):
    for b in sys.argv[1:]:
        t, rc = once(b)
        print(os.path.basename(b), "wait returned after %.2f s, exit %d" % (t, rc))
