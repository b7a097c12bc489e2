#!/usr/bin/python3
"""Figures and markdown tables from bench/run_cluster.sh's raw JSON files.

  /usr/bin/python3 bench/report_cluster.py bench/out/cluster [--out bench/out/cluster.json]
      [--meta KEY=VALUE ...]

Prints the markdown tables; with --out also writes every figure (and the machine, the date
and the git revision, read from .git without running git) as one JSON object.
"""
import argparse
import glob
import json
import os
import platform
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(raw, pattern):
    runs = []
    for path in sorted(glob.glob(os.path.join(raw, pattern))):
        try:
            with open(path) as f:
                runs.append(json.load(f))
        except (OSError, ValueError):
            pass  # a run that wrote nothing (it failed; the script logged it)
    return runs


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "runs": len(values), "values": values}


def git_revision():
    """HEAD's commit from the .git files (no git process)."""
    git = os.path.join(ROOT, ".git")
    try:
        if os.path.isfile(git):  # a worktree: "gitdir: PATH"
            with open(git) as f:
                git = os.path.join(ROOT, f.read().split(":", 1)[1].strip())
        with open(os.path.join(git, "HEAD")) as f:
            head = f.read().strip()
        if not head.startswith("ref:"):
            return head
        ref = head.split(":", 1)[1].strip()
        common = git
        if os.path.isfile(os.path.join(git, "commondir")):
            with open(os.path.join(git, "commondir")) as f:
                common = os.path.normpath(os.path.join(git, f.read().strip()))
        for base in (git, common):
            path = os.path.join(base, ref)
            if os.path.isfile(path):
                with open(path) as f:
                    return f.read().strip()
        with open(os.path.join(common, "packed-refs")) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref:
                    return parts[0]
    except (OSError, IndexError):
        pass
    return None


def machine():
    info = {"nproc": os.cpu_count(), "kernel": platform.release()}
    try:
        info["nproc"] = int(subprocess.run(["nproc"], capture_output=True, text=True,
                                           timeout=10).stdout.strip())
    except (OSError, ValueError, subprocess.SubprocessError):
        pass
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    info["memory_gib"] = round(int(line.split()[1]) / 2**20, 1)
        with open("/etc/debian_version") as f:
            info["debian"] = f.read().strip()
    except OSError:
        pass
    versions = {}
    for pkg in ("rabbitmq-server", "postgresql-15", "python3-celery", "python3-kombu",
                "python3-torch", "librabbitmq4", "libpq5", "libsqlite3-0"):
        try:
            v = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True,
                               text=True, timeout=10).stdout.strip()
            if v:
                versions[pkg] = v
        except (OSError, subprocess.SubprocessError):
            pass
    info["packages"] = versions
    return info


def fmt_spread(s, digits=2):
    if not s:
        return "-"
    f = "%%.%df" % digits
    if s["runs"] == 1:
        return f % s["median"]
    return (f + " (" + f + "-" + f + ")") % (s["median"], s["min"], s["max"])


def ratio(a, b):
    return a / b if a and b else None


def fmt_ratio(r):
    return "%.2fx" % r if r else "-"


def queue_section(raw):
    systems = [
        ("amqp_pg", "layerlab AMQP queue + PostgreSQL store", "noop_amqp_pg_*.json"),
        ("amqp_sqlite", "layerlab AMQP queue + SQLite store", "noop_amqp_sqlite_*.json"),
        ("store_pg", "layerlab store queue, PostgreSQL (no broker)", "noop_store_pg_*.json"),
        ("store_sqlite", "layerlab store queue, SQLite (embedded default)",
         "noop_store_sqlite_*.json"),
    ]
    out = {}
    celery = load(raw, "noop_celery_*.json")
    c = spread([r["tasks_per_second"] for r in celery if r.get("tasks_ok") == r.get("tasks")])
    out["celery"] = {"tasks_per_second": c,
                     "submit_tasks_per_second": spread([r["submit_tasks_per_second"]
                                                        for r in celery]),
                     "tasks": celery[0]["tasks"] if celery else None,
                     "ok": [r.get("tasks_ok") for r in celery]}
    for key, _, pattern in systems:
        runs = load(raw, pattern)
        good = [r for r in runs if r.get("completed") == r.get("trials")
                and not r.get("worker_failures")]
        e2e = [r["completed"] / (r["seconds"] + r.get("publish_seconds", 0)) for r in good]
        out[key] = {
            "trials": runs[0]["trials"] if runs else None,
            "runs": len(runs), "complete_runs": len(good),
            "consume_trials_per_second": spread([r["trials_per_second"] for r in good]),
            "end_to_end_trials_per_second": spread(e2e),
            "publish_per_second": spread([r["publish_per_second"] for r in good
                                          if r.get("publish_per_second")]),
            "raw": runs,
        }
    cm = c["median"] if c else None
    lines = ["### (a) Empty trials per second, 2 worker processes, prefetch 1",
             "",
             "| system | trials x runs (complete) | trials/s consuming | trials/s incl. publishing "
             "| publish/s | vs Celery (incl. publishing) |",
             "|---|---|---|---|---|---|"]
    for key, name, _ in systems:
        s = out[key]
        e = s["end_to_end_trials_per_second"]
        out[key]["ratio_vs_celery"] = ratio(e["median"] if e else None, cm)
        lines.append("| %s | %s x %d (%d) | %s | %s | %s | %s |" % (
            name, s["trials"], s["runs"], s["complete_runs"],
            fmt_spread(s["consume_trials_per_second"], 0), fmt_spread(e, 0),
            fmt_spread(s["publish_per_second"], 0), fmt_ratio(out[key]["ratio_vs_celery"])))
    lines.append("| Celery 5.2 no-op tasks, same broker (submit + run + rpc:// result) | %s x %d "
                 "(%d) | - | %s | %s | 1.00x |" % (
                     out["celery"]["tasks"], len(celery), c["runs"] if c else 0,
                     fmt_spread(c, 0), fmt_spread(out["celery"]["submit_tasks_per_second"], 0)))
    return out, lines


def sweep_section(raw):
    out = {}
    systems = [("layerlab_pg", "layerlab run --workers 2, RabbitMQ + PostgreSQL",
                "sweep_layerlab_pg_*.json"),
               ("celery", "Celery + RabbitMQ + PyTorch (same broker)", "sweep_celery_*.json"),
               ("layerlab_sqlite", "layerlab run --workers 2, SQLite (embedded, reference)",
                "sweep_layerlab_sqlite_*.json")]
    for key, _, pattern in systems:
        runs = load(raw, pattern)
        if key == "celery":
            ok = [r for r in runs if r.get("exactly_once")]
        else:
            ok = [r for r in runs if r.get("complete") and
                  r.get("statuses", {}).get("completed") == 24 and len(r["statuses"]) == 1]
        out[key] = {"runs": len(runs), "complete_runs": len(ok),
                    "wall_seconds": spread([r["wall_seconds"] for r in ok]),
                    "best": [r.get("best") for r in ok if r.get("best") is not None]}
    cel = out["celery"]["wall_seconds"]
    lines = ["### (b) Sweep A (24 configurations, digits, 2 workers)", "",
             "| system | runs (exactly once) | wall s median (min-max) | configurations/hour "
             "| speed-up vs Celery |", "|---|---|---|---|---|"]
    for key, name, _ in systems:
        s = out[key]
        w = s["wall_seconds"]
        s["configs_per_hour"] = 24 / w["median"] * 3600 if w else None
        s["speedup_vs_celery"] = ratio(cel["median"] if cel else None, w["median"] if w else None)
        lines.append("| %s | %d (%d) | %s | %s | %s |" % (
            name, s["runs"], s["complete_runs"], fmt_spread(w),
            "%.0f" % s["configs_per_hour"] if s["configs_per_hour"] else "-",
            fmt_ratio(s["speedup_vs_celery"])))
    return out, lines


def small_section(raw):
    out = {}
    systems = [("sqlite", "layerlab run --workers 2, SQLite (embedded default)",
                "small_sqlite_*.json"),
               ("pg", "layerlab run --workers 2, RabbitMQ + PostgreSQL", "small_pg_*.json")]
    for key, _, pattern in systems:
        runs = load(raw, pattern)
        ok = [r for r in runs if r.get("complete")]
        trials = [sum(r.get("statuses", {}).values()) for r in ok]
        out[key] = {"runs": len(runs), "complete_runs": len(ok),
                    "statuses": [r.get("statuses") for r in runs],
                    "wall_seconds": spread([r["wall_seconds"] for r in ok]),
                    "ms_per_trial": spread([r["wall_seconds"] / t * 1000
                                            for r, t in zip(ok, trials) if t])}
    base = out["sqlite"]["ms_per_trial"]
    lines = ["### (c) Cost per trial: 2,000 tiny trials (bench/studies/cluster_small.yaml)", "",
             "| system | runs (complete) | trials | wall s median (min-max) | ms per trial "
             "| trials/s | cost vs embedded |", "|---|---|---|---|---|---|---|"]
    for key, name, _ in systems:
        s = out[key]
        m = s["ms_per_trial"]
        s["ratio_vs_sqlite"] = ratio(m["median"] if m else None, base["median"] if base else None)
        st = next((x for x in s["statuses"] if x), {})
        lines.append("| %s | %d (%d) | %s | %s | %s | %s | %s |" % (
            name, s["runs"], s["complete_runs"],
            ", ".join("%s %d" % kv for kv in sorted(st.items())) or "-",
            fmt_spread(s["wall_seconds"]), fmt_spread(m, 3),
            "%.0f" % (1000 / m["median"]) if m else "-", fmt_ratio(s["ratio_vs_sqlite"])))
    if base and out["pg"]["ms_per_trial"]:
        out["extra_ms_per_trial"] = out["pg"]["ms_per_trial"]["median"] - base["median"]
        lines.append("")
        lines.append("The distributed path adds %.2f ms per trial (median against median)." %
                     out["extra_ms_per_trial"])
    return out, lines


def main():
    p = argparse.ArgumentParser()
    p.add_argument("raw")
    p.add_argument("--out")
    p.add_argument("--meta", nargs="*", default=[])
    a = p.parse_args()
    queue, q_lines = queue_section(a.raw)
    sweep, s_lines = sweep_section(a.raw)
    small, c_lines = small_section(a.raw)
    meta = dict(kv.split("=", 1) for kv in a.meta if "=" in kv)
    try:
        with open(os.path.join(a.raw, "loadavg.txt")) as f:
            load_samples = [float(x) for x in f.read().split()]
    except (OSError, ValueError):
        load_samples = []
    if load_samples:
        meta["loadavg_1min_while_measuring"] = spread(load_samples)
    mach = machine()
    head = ["Distributed mode, %s; %s, %s cores, Debian %s; revision %s" % (
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), mach.get("cpu", "?"),
        mach.get("nproc", "?"), mach.get("debian", "?"), (git_revision() or "?")[:12])]
    if load_samples:
        head.append("1-minute load average while measuring: median %.1f, max %.1f (%d samples)"
                    % (statistics.median(load_samples), max(load_samples), len(load_samples)))
    text = "\n".join(head + [""] + q_lines + [""] + s_lines + [""] + c_lines) + "\n"
    print(text, end="")
    if a.out:
        doc = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "revision": git_revision(), "machine": mach, "meta": meta,
               "queue": queue, "sweep_a": sweep, "cluster_small": small, "table_markdown": text}
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
