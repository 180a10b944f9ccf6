#!/usr/bin/env python3
"""perfkernels.py PERF_DATA: attribute perf samples in tpucc's loaded kernel objects to kernels.

Record with build ids in the mmap events (the backend deletes its private copy load-NNN.so
right after dlopen, so perf cannot read it later):
    perf record --buildid-mmap -o /tmp/X.data CMD
The script finds, by build id, the cached object (in $TPUCC_LLVM_CACHE or ~/.cache/tpucc/llvm)
each load-NNN.so was a copy of, and prints each object's share of the samples by kernel (kNN),
the TOP (default 12) largest; read the .ll beside the object to see what a kernel computes.
"""
import bisect, collections, glob, os, re, subprocess, sys
data = sys.argv[1]
cache = os.environ.get('TPUCC_LLVM_CACHE') or os.path.expanduser('~/.cache/tpucc/llvm')
ids = {}
for f in glob.glob(cache + '/*.so'):
    if os.path.basename(f).startswith('load-'):
        continue
    m = re.search(r'Build ID: ([0-9a-f]+)', subprocess.run(['readelf', '-n', f], capture_output=True, text=True).stdout)
    if m:
        ids[m.group(1)] = f
dso_file = {}
for l in subprocess.run(['perf', 'script', '-i', data, '--show-mmap-events'], capture_output=True, text=True).stdout.splitlines():
    m = re.search(r'PERF_RECORD_MMAP2.*<([0-9a-f]+)>\]: \S+ (\S*load-\d+\.so)', l)
    if m:
        dso_file[os.path.basename(m.group(2))] = ids.get(m.group(1))
rep = subprocess.run(['perf', 'report', '-i', data, '--no-children', '-g', 'none', '--sort', 'dso,sym'],
                     capture_output=True, text=True).stdout
by = collections.defaultdict(list)
for l in rep.splitlines():
    p = l.split()
    if len(p) >= 4 and 'load-' in p[1] and p[3].startswith('0x'):
        by[os.path.basename(p[1])].append((float(p[0].rstrip('%')), int(p[3], 16)))
for dso, samples in sorted(by.items(), key=lambda kv: -sum(s for s, _ in kv[1])):
    f = dso_file.get(dso)
    if not f:
        print(dso, '%.1f%%' % sum(s for s, _ in samples), '(object not found in the cache)')
        continue
    syms = []
    for l in subprocess.run(['nm', '-n', '--defined-only', f], capture_output=True, text=True).stdout.splitlines():
        a, _, name = l.split()
        syms.append((int(a, 16), name))
    addrs = [a for a, _ in syms]
    agg = collections.Counter()
    for pct, a in samples:
        i = bisect.bisect_right(addrs, a) - 1
        agg[syms[i][1] if i >= 0 else '?'] += pct
    print(f, '%.1f%%' % sum(agg.values()),
          ' '.join('%s=%.1f%%' % kv for kv in agg.most_common(int(os.environ.get("TOP", "12")))))
