"""Prints the markdown table of bench/run_scaling.sh's results (bench/out/scaling.json):
medians per configuration, speed-ups against one worker, and layerlab against its peer."""
import json
import statistics
import sys


def median_wall(runs, name):
    walls = [r["wall_seconds"] for r in runs if r["bench"] == name]
    return statistics.median(walls) if walls else None


def main(path):
    data = json.load(open(path))
    runs, cores = data["runs"], data["cores"]
    print(f"{data['date_utc']}, {cores} cores, load {data['load'][0]:.2f}\n")
    print("| workers | layerlab sweep A, s | speed-up | efficiency | PyTorch pool, s | speed-up | layerlab vs peer |")
    print("|---|---|---|---|---|---|---|")
    base = median_wall(runs, "sweepA_w1")
    peer_base = median_wall(runs, "peer_sweepA_p1")
    for w in range(1, cores + 1):
        t, p = median_wall(runs, f"sweepA_w{w}"), median_wall(runs, f"peer_sweepA_p{w}")
        print(f"| {w} | {t:.2f} | {base / t:.2f}x | {base / t / w:.0%} | {p:.2f} | "
              f"{peer_base / p:.2f}x | {p / t:.2f}x faster |")
    print("\n| pack | 64 same-shape trials, s | trials/s | vs pack 1 |")
    print("|---|---|---|---|")
    k1 = median_wall(runs, "pack_k1")
    for k in (1, 16, 64):
        t = median_wall(runs, f"pack_k{k}")
        print(f"| {k} | {t:.2f} | {64 / t:.1f} | {k1 / t:.2f}x |")
    t50, rep = median_wall(runs, "small50k"), median_wall(runs, "report_50k")
    if t50:
        print(f"\n50,000 trials end to end: {t50:.1f} s ({50000 / t50:,.0f} trials/s); "
              f"`layerlab report` on them: {rep:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/out/scaling.json")
