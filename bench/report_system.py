#!/usr/bin/python3
"""Markdown tables from bench/run_system.sh's JSON files (bench/out).

  /usr/bin/python3 bench/report_system.py bench/out
"""
import glob
import json
import os
import statistics
import sys


def load(pattern):
    return [json.load(open(p)) for p in sorted(glob.glob(pattern))]


def main():
    out = sys.argv[1]
    rows = []
    for name, pattern in (("layerlab run --workers 2 (SQLite)", "sweep_layerlab_*.json"),
                          ("Celery + RabbitMQ + PyTorch", "sweep_celery_*.json"),
                          ("Optuna GridSampler, 2 processes", "sweep_optuna_*.json")):
        runs = load(os.path.join(out, pattern))
        walls = [r["wall_seconds"] for r in runs if "wall_seconds" in r]
        if walls:
            rows.append((name, statistics.median(walls), min(walls), max(walls), len(walls)))
    print("### Sweep A (24 configurations, digits, 2 cores)\n")
    print("| system | runs | wall s median (min-max) | configurations/hour | layerlab speed-up |")
    print("|---|---|---|---|---|")
    ours = rows[0][1] if rows else None
    for name, med, lo, hi, n in rows:
        print("| %s | %d | %.2f (%.2f-%.2f) | %.0f | %.1fx |" % (
            name, n, med, lo, hi, 24 / med * 3600, med / ours))
    noop = load(os.path.join(out, "celery_noop.json"))
    queue = load(os.path.join(out, "queue_*.json"))
    print("\n### Queue overhead: empty trials per second, 2 workers\n")
    print("| system | trials | trials/s (median of runs) | ratio |")
    print("|---|---|---|---|")
    celery = noop[0]["tasks_per_second"] if noop else None
    if queue:
        q = statistics.median(r["trials_per_second"] for r in queue)
        print("| layerlab store queue (SQLite) | %d x %d | %.0f | %s |" % (
            queue[0]["trials"], len(queue), q, "%.1fx" % (q / celery) if celery else "-"))
    if celery:
        print("| Celery + RabbitMQ no-op tasks | %d | %.0f | 1.0x |" % (noop[0]["tasks"], celery))
    studies = [(name, load(os.path.join(out, name + ".json")))
               for name in ("small_50k", "pruned_50k")]
    if any(runs for _, runs in studies):
        print("\n### 50,000 small trials end to end (iris, 1x8, 10 epochs, 2 workers)\n")
        print("| study | trials | statuses | wall s | trials/s | epoch rows | store size |")
        print("|---|---|---|---|---|---|---|")
    for name, runs in studies:
        if runs:
            s = runs[0]
            print("| %s | %d | %s | %.1f | %.0f | %d | %.1f MB |" % (
                name, s["trials"], ", ".join("%s %d" % kv for kv in sorted(s["status"].items())),
                s["wall_seconds"], s["trials_per_second"], s["epoch_rows"],
                s["store_bytes"] / 1e6))

    tpe = [(name, [r["wall_seconds"] for r in load(os.path.join(out, pattern))])
           for name, pattern in (("layerlab run --workers 2 (SQLite)", "tpe_layerlab_*.json"),
                                 ("Optuna TPESampler + PyTorch, 2 processes",
                                  "tpe_optuna_*.json"))]
    if all(walls for _, walls in tpe):
        print("\n### An adaptive study: tpe, 1,000 tiny trials (iris), 2 workers\n")
        print("| system | runs | wall s median (min-max) | layerlab speed-up |")
        print("|---|---|---|---|")
        ours = statistics.median(tpe[0][1])
        for name, walls in tpe:
            med = statistics.median(walls)
            print("| %s | %d | %.2f (%.2f-%.2f) | %.1fx |" % (
                name, len(walls), med, min(walls), max(walls), med / ours))


if __name__ == "__main__":
    main()
