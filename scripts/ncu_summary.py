#!/usr/bin/env python3
"""Sums an `ncu --csv --metrics gpu__time_duration.sum` log by kernel name: total ms, launches, name.

   scripts/ncu_summary.py ncu.csv [top]      (default: the 40 kernels with the most time)
"""
import collections
import csv
import sys


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    agg = collections.defaultdict(lambda: [0, 0.0])
    header = None
    for row in csv.reader(open(path, newline="")):
        if "Kernel Name" in row:
            header = row
            continue
        if not header or len(row) != len(header):
            continue
        d = dict(zip(header, row))
        if d.get("Metric Name") != "gpu__time_duration.sum":
            continue
        ns = float(d["Metric Value"].replace(",", ""))
        k = d["Kernel Name"][:110]
        agg[k][0] += 1
        agg[k][1] += ns
    total = sum(v[1] for v in agg.values())
    print(f"kernels: {sum(v[0] for v in agg.values())} launches, {total / 1e6:.3f} ms of GPU time")
    for k, (n, ns) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{ns / 1e6:9.3f} ms {n:5d}  {k}")


if __name__ == "__main__":
    main()
