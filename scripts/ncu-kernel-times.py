# Per-kernel durations from an Nsight Compute CSV (gpu__time_duration.sum):
#   ncu -k regex:NAME --metrics gpu__time_duration.sum --csv --print-units base CMD > f.csv
#   python3 scripts/ncu-kernel-times.py f.csv
# prints each QR / finish launch (grid, us) and the sum per kernel.
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
hdr = None; tot = collections.defaultdict(float); cnt = collections.Counter(); mx = collections.defaultdict(float)
for r in rows:
    if 'Kernel Name' in r: hdr = r; continue
    if not hdr or len(r) != len(hdr): continue
    d = dict(zip(hdr, r))
    if d.get('Metric Name') != 'gpu__time_duration.sum': continue
    k = d['Kernel Name'].split('<')[0].split('(')[0]
    g = d.get('Grid Size', '')
    v = float(d['Metric Value'].replace(',', '')) / 1e3
    tot[k] += v; cnt[k] += 1; mx[k] = max(mx[k], v)
    if 'qr' in k or 'finish' in k: print(f'{k:28} grid {g:>14} {v:9.1f} us')
for k in tot: print(f'SUM {k:28} n={cnt[k]:4d} total {tot[k]/1e3:8.2f} ms max {mx[k]/1e3:7.2f} ms')
