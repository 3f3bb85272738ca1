#!/usr/bin/env python3
"""Per-mapping breakdown of /proc/PID/smaps: Rss, Pss, Private (clean+dirty) in KiB,
grouped: exe r--/r-x/rw- segments by perms, [heap], [stack], thread stacks (anon
with a guard page before), other anon, libs."""
import sys, re, os
def parse(pid):
    maps=[]; cur=None
    for line in open(f"/proc/{pid}/smaps"):
        m=re.match(r'^([0-9a-f]+)-([0-9a-f]+) (\S+) (\S+) \S+ \d+\s*(.*)$', line)
        if m:
            cur={'start':int(m[1],16),'end':int(m[2],16),'perms':m[3],'off':int(m[4],16),'name':m[5].strip()}
            maps.append(cur); continue
        k,_,v=line.partition(':')
        if cur is not None and v.strip().endswith('kB'):
            cur[k]=int(v.split()[0])
    return maps
def main():
    pid=sys.argv[1]; exe=os.readlink(f"/proc/{pid}/exe")
    maps=parse(pid); groups={}
    for i,m in enumerate(maps):
        n=m['name']
        if n==exe or n.endswith(os.path.basename(exe)) and n.startswith('/'):
            g=f"exe {m['perms']}"
        elif n=='[heap]': g='[heap]'
        elif n=='[stack]': g='[stack]'
        elif n.startswith('/'): g='lib '+os.path.basename(n).split('.so')[0]+' '+m['perms']
        elif n=='' :
            prev=maps[i-1] if i else None
            size=(m['end']-m['start'])//1024
            if prev and prev['perms'].startswith('---') and prev['end']==m['start'] and size<=8192+8:
                g=f'anon thread stack?'
            else: g='anon'
        else: g=n
        d=groups.setdefault(g,{'Size':0,'Rss':0,'Pss':0,'Private':0,'n':0})
        d['Size']+=m.get('Size',0); d['Rss']+=m.get('Rss',0); d['Pss']+=m.get('Pss',0)
        d['Private']+=m.get('Private_Clean',0)+m.get('Private_Dirty',0); d['n']+=1
    tot={'Size':0,'Rss':0,'Pss':0,'Private':0}
    print(f"{'mapping':40} {'n':>3} {'Size':>8} {'Rss':>7} {'Pss':>7} {'Private':>7}")
    for g,d in sorted(groups.items(), key=lambda x:-x[1]['Pss']):
        if d['Rss']==0 and d['Size']<64: continue
        print(f"{g:40} {d['n']:>3} {d['Size']:>8} {d['Rss']:>7} {d['Pss']:>7} {d['Private']:>7}")
        for k in tot: tot[k]+=d[k]
    print(f"{'total':40} {'':>3} {tot['Size']:>8} {tot['Rss']:>7} {tot['Pss']:>7} {tot['Private']:>7}")
    print("threads:", len(os.listdir(f"/proc/{pid}/task")))
main()
