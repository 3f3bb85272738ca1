#!/usr/bin/env python3
"""PSS of one session, tickhost and its launcher, after 48 MiB of output through bash, idle 2 s
(with each process's resident code: the executable's r-x pages); "tmux" for a tmux server after
the same output. Memory only: run it on a loaded machine too. Usage: session_pss.py BIN|tmux ..."""
import os,subprocess,sys,tempfile,time,json
def pss(pid):
    d={}
    for l in open(f"/proc/{pid}/smaps_rollup"):
        p=l.split()
        if len(p)>=3 and p[-1]=="kB": d[p[0].rstrip(':')]=int(p[1])
    return d
def text_rss(pid, exe):
    rss=0; cur=False
    for l in open(f"/proc/{pid}/smaps"):
        p=l.split()
        if '-' in p[0] and len(p)>=5 and not p[0].endswith(':'):
            cur = (len(p)>5 and p[5]==exe and 'x' in p[1])
        elif cur and p[0]=='Rss:': rss+=int(p[1])
    return rss
FLOOD="head -c 50331648 /dev/zero | tr '\\0' 'x' | fold -w 100; echo; echo DONE"
def tickloop(b):
    tmp=tempfile.mkdtemp(prefix="pss")
    env=dict(os.environ, TICKLOOP_RUNTIME_DIR=tmp+"/run", HOME=tmp, XDG_CONFIG_HOME=tmp+"/c", XDG_DATA_HOME=tmp+"/d")
    run=lambda *a: subprocess.run([b,*a],env=env,stdin=subprocess.DEVNULL,capture_output=True,text=True)
    o=json.loads(run("open","--shell","--name","s","--json","--","bash","--norc","--noprofile").stdout)
    run("wait","--prompt","shell:s")
    run("run","shell:s",FLOOD,"--json")
    time.sleep(2)
    th=int(open(tmp+"/run/tickhost.pid").read().split()[0])
    lp=o["launcher_pid"]
    a,bb=pss(th),pss(lp)
    exe=os.path.realpath(b)
    r={"bin":b,"pss_kib":a["Pss"]+bb["Pss"],"tickhost_pss":a["Pss"],"launcher_pss":bb["Pss"],
       "text_rss_tickhost":text_rss(th,exe),"text_rss_launcher":text_rss(lp,exe),
       "private_dirty":a["Private_Dirty"]+bb["Private_Dirty"]}
    run("shutdown")
    return r
def tmux():
    tmp=tempfile.mkdtemp(prefix="psst")
    env=dict(os.environ,TMUX_TMPDIR=tmp)
    t=["tmux","-L","pss","-f","/dev/null"]
    subprocess.run(t+["new","-d","-s","b","-x","120","-y","30","bash --norc --noprofile"],env=env)
    subprocess.run(t+["send-keys","-t","b",FLOOD,"Enter"],env=env)
    for _ in range(600):
        o=subprocess.run(t+["capture-pane","-p","-t","b"],env=env,capture_output=True,text=True).stdout
        if "\nDONE" in o: break
        time.sleep(0.5)
    time.sleep(2)
    pid=int(subprocess.run(t+["display","-p","#{pid}"],env=env,capture_output=True,text=True).stdout)
    r={"bin":"tmux","pss_kib":pss(pid)["Pss"]}
    subprocess.run(t+["kill-server"],env=env)
    return r
def others(exe):
    """Other processes that map the same executable file: PSS divides its pages among them,
    so a stray session left running makes the figure read low (4.3 MiB instead of 7.2)."""
    mine=set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit(): continue
        try:
            if os.path.realpath(f"/proc/{pid}/exe")==exe: mine.add(int(pid))
        except OSError: pass
    return sorted(mine)
for b in sys.argv[1:]:
    if b!="tmux" and others(os.path.realpath(b)):
        print(json.dumps({"bin":b,"error":"other processes run this executable (pids "
                          +", ".join(map(str,others(os.path.realpath(b))))
                          +"): PSS would read low; end them and run again"}),flush=True)
        continue
    print(json.dumps(tmux() if b=="tmux" else tickloop(b)),flush=True)
