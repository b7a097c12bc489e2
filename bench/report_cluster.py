#!/usr/bin/python3
"""Figures and markdown tables from bench/run_cluster.sh's raw JSON files.

  /usr/bin/python3 bench/report_cluster.py bench/out/cluster [--out bench/out/cluster.json]
      [--meta KEY=VALUE ...]

Prints the markdown tables; with --out also writes every figure (and the machine, the date
and the git revision, read from .git without running git) as one JSON object. The scaling
section (d) also reads the lock sampler's files (scale_*.waits.jsonl, written by
bench/cluster/sample_waits.py) and keeps the samples taken while the workers ran.
"""
import argparse
import glob
import json
import os
import platform
import re
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
        ("amqp_pg", "layerlab AMQP queue + PostgreSQL store, prefetch 2",
         "noop_amqp_pg_p2_*.json"),
        ("amqp_pg_default", "layerlab AMQP queue + PostgreSQL store, the worker's default "
         "(prefetch 1, raised to 32 while trials are short)", "noop_amqp_pg_adaptive_*.json"),
        ("amqp_sqlite", "layerlab AMQP queue + SQLite store, prefetch 2",
         "noop_amqp_sqlite_p2_*.json"),
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
            "prefetch": runs[0].get("prefetch") if runs and key.startswith("amqp") else None,
            "runs": len(runs), "complete_runs": len(good),
            "consume_trials_per_second": spread([r["trials_per_second"] for r in good]),
            "end_to_end_trials_per_second": spread(e2e),
            "publish_per_second": spread([r["publish_per_second"] for r in good
                                          if r.get("publish_per_second")]),
            "raw": runs,
        }
    cm = c["median"] if c else None
    lines = ["### (a) Empty trials per second, 2 worker processes",
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
                     out["celery"]["tasks"] or "-", len(celery), c["runs"] if c else 0,
                     fmt_spread(c, 0), fmt_spread(out["celery"]["submit_tasks_per_second"], 0)))
    return out, lines


def sweep_section(raw):
    out = {}
    systems = [("layerlab_pg", "layerlab run --workers 2, RabbitMQ + PostgreSQL "
                "(a new database and queue each run)", "sweep_layerlab_pg_*.json"),
               ("layerlab_pg_standing", "layerlab run --workers 2, RabbitMQ + PostgreSQL "
                "(a standing database and queue, a new study each run)",
                "sweep_standing_pg_*.json"),
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


SCALE_SYSTEMS = [("amqp_pg", "layerlab AMQP queue + PostgreSQL store, the worker's default "
                  "prefetch (1, raised to 32)"),
                 ("store_pg", "layerlab store queue, PostgreSQL (no broker)"),
                 ("amqp_pgbouncer", "the AMQP queue again, PostgreSQL behind PgBouncer "
                  "(transaction mode)"),
                 ("store_pgbouncer", "the store queue again, behind PgBouncer (transaction "
                  "mode)")]


def load_samples(path, bench):
    """The lock sampler's samples of one run, those taken while its workers ran: queue_bench's
    `seconds` (fork to the last worker's exit) before the run's end, which run_cluster.sh
    appends as the last line. All samples when that line or the figure is missing."""
    samples, run = [], None
    try:
        with open(path) as f:
            for line in f:
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue  # a line cut short when the sampler was killed
                if "run" in obj:
                    run = obj["run"]
                elif obj.get("t") is not None:
                    samples.append(obj)
    except OSError:
        return None
    if run and bench and bench.get("seconds"):
        lo, hi = run["end"] - bench["seconds"], run["end"]
        samples = [x for x in samples if lo <= x["t"] <= hi]
    return samples


def wait_summary(samples, window_seconds=None):
    """PostgreSQL's view of the waits in `samples` (one run's or several runs' together)."""
    n = len(samples)
    if not n:
        return None
    backend_samples = sum(x["active"] for x in samples)
    events = {}       # wait event -> backend-samples
    lock_events = {}  # Lock wait event -> samples with at least one backend waiting on it
    locks = {}        # ungranted lock -> [samples with one, most at once]
    queries = {}      # "wait event|statement" waiting on a Lock -> samples with one
    blockers = {}     # "wait event|blocker's state|its statement" -> samples with one
    any_lock = 0
    for x in samples:
        kinds = set()
        for key, count in x["waits"].items():
            events[key] = events.get(key, 0) + count
            if key.startswith("Lock:"):
                kinds.add(key.split(":", 1)[1])
        for kind in kinds:
            lock_events[kind] = lock_events.get(kind, 0) + 1
        any_lock += bool(kinds)
        for key, count in x["locks"].items():
            seen = locks.setdefault(key, [0, 0])
            seen[0] += 1
            seen[1] = max(seen[1], count)
        for key in x.get("lock_queries", {}):
            queries[key] = queries.get(key, 0) + 1
        for key in x.get("blockers", {}):
            blockers[key] = blockers.get(key, 0) + 1
    waiting = {k: v for k, v in events.items() if k != "-"}
    top = sorted(waiting.items(), key=lambda kv: -kv[1])[:3]
    ms = spread([x["ms"] for x in samples if x.get("ms") is not None])
    out = {
        "samples": n,
        "mean_active_backends": backend_samples / n,
        "max_active_backends": max(x["active"] for x in samples),
        "mean_idle_in_transaction": sum(x.get("idle_in_tx", 0) for x in samples) / n,
        "backend_samples": backend_samples,
        "no_wait_event_share": events.get("-", 0) / backend_samples if backend_samples else None,
        "lock_wait_sample_share": any_lock / n,
        "lock_wait_sample_share_by_event": {k: v / n for k, v in sorted(lock_events.items())},
        "top_wait_events": [{"event": k, "backend_sample_share": v / backend_samples}
                            for k, v in top] if backend_samples else [],
        "wait_event_backend_samples": events,
        "ungranted_locks": {k: {"sample_share": v[0] / n, "max_at_once": v[1]}
                            for k, v in sorted(locks.items(), key=lambda kv: -kv[1][0])},
        "statements_waiting_on_locks": [
            {"wait_event": k.split("|", 1)[0], "statement": k.split("|", 1)[1],
             "sample_share": v / n} for k, v in sorted(queries.items(), key=lambda kv: -kv[1])],
        "blocking_statements": [
            dict(zip(("wait_event", "blocker_state", "statement"), k.split("|", 2)),
                 sample_share=v / n) for k, v in sorted(blockers.items(), key=lambda kv: -kv[1])],
        "sample_ms": {k: v for k, v in ms.items() if k != "values"} if ms else None,
    }
    if window_seconds:
        out["samples_per_second"] = n / window_seconds
    return out


def pct(x):
    return "-" if x is None else "%.0f%%" % (100 * x) if x >= 0.01 or x == 0 else "<1%"


# layerlab's advisory lock keys (src/store/pg_*.cc).
ADVISORY_KEYS = {"7809643637400461666": "the store-wide write lock of before 2fbbeff",
                 "7809643637400461667": "change numbering"}


def lock_name(key):
    """'advisory|7809...|ExclusiveLock' -> 'advisory 7809... (ExclusiveLock)'."""
    kind, what, mode = (key.split("|") + ["", ""])[:3]
    if kind == "advisory" and what in ADVISORY_KEYS:
        what += " = " + ADVISORY_KEYS[what]
    return "%s%s (%s)" % (kind, " " + what if what else "", mode)


def scaling_section(raw):
    found = {}  # (system, workers) -> [(bench run, samples)]
    for path in sorted(glob.glob(os.path.join(raw, "scale_*_w*_*.json"))):
        m = re.match(r"scale_(.+)_w(\d+)_(\d+)\.json$", os.path.basename(path))
        if not m:
            continue
        try:
            with open(path) as f:
                bench = json.load(f)
        except (OSError, ValueError):
            bench = None  # the run failed (the script logged it)
        samples = load_samples(path[:-len(".json")] + ".waits.jsonl", bench)
        found.setdefault((m.group(1), int(m.group(2))), []).append((bench, samples))
    workers = sorted({w for _, w in found})
    out = {"workers": workers, "baseline_workers": workers[0] if workers else None}
    if not workers:
        return out, []
    base_w = workers[0]
    for key, _ in SCALE_SYSTEMS:
        out[key] = {}
        for w in workers:
            runs = found.get((key, w), [])
            benches = [b for b, _ in runs if b]
            good = [b for b in benches if b.get("completed") == b.get("trials")
                    and not b.get("worker_failures")]
            per_run = []
            pooled = []
            for b, smp in runs:
                if smp is None:
                    continue
                per_run.append(wait_summary(smp, b.get("seconds") if b else None))
                pooled.extend(smp)
            seconds = sum(b["seconds"] for b, smp in runs if b and smp)
            out[key][str(w)] = {
                "trials": benches[0]["trials"] if benches else None,
                "prefetch": benches[0].get("prefetch") if benches and key.startswith("amqp")
                else None,
                "runs": len(runs), "complete_runs": len(good),
                "trials_per_second": spread([b["trials_per_second"] for b in good]),
                "steady_trials_per_second": spread(
                    [b.get("steady_trials_per_second") for b in good]),
                "all_started_at": spread([b.get("all_started_at") for b in good]),
                "waits": wait_summary(pooled, seconds),
                "waits_per_run": per_run,
                "raw": benches,
            }
        for figure, name in (("trials_per_second", "ratio_vs_baseline"),
                             ("steady_trials_per_second", "steady_ratio_vs_baseline")):
            b = out[key][str(base_w)][figure]
            for w in workers:
                t = out[key][str(w)][figure]
                out[key][str(w)][name] = ratio(t["median"] if t else None,
                                               b["median"] if b else None)
    n_trials = next((out[k][str(w)]["trials"] for k, _ in SCALE_SYSTEMS for w in workers
                     if out[k][str(w)]["trials"]), None)
    lines = ["### (d) Scaling: empty trials per second by worker processes (%s trials, "
             "PostgreSQL store)" % (n_trials or "?"), "",
             "| system | worker processes | runs (complete) | trials/s consuming | vs %d workers "
             "| trials/s, steady phase | vs %d workers | start-up, s |" % (base_w, base_w),
             "|---|---|---|---|---|---|---|---|"]
    for key, name in SCALE_SYSTEMS:
        for w in workers:
            s = out[key][str(w)]
            lines.append("| %s | %d | %d (%d) | %s | %s | %s | %s | %s |" % (
                name, w, s["runs"], s["complete_runs"], fmt_spread(s["trials_per_second"], 0),
                fmt_ratio(s["ratio_vs_baseline"]), fmt_spread(s["steady_trials_per_second"], 0),
                fmt_ratio(s["steady_ratio_vs_baseline"]), fmt_spread(s["all_started_at"], 2)))
    lines += ["", "trials/s consuming: queue_bench's figure, trials completed over the time from "
              "forking the workers to the last one's exit (the trials are written, and for AMQP "
              "published, before; the store queue's workers stop after 50 ms with nothing). "
              "Steady phase: the trials finished from the moment the last worker got its first "
              "trial until 90% were done, over that time (no connections, no end of the queue). "
              "Start-up: from the fork to the moment the last worker got its first trial "
              "(each worker's store connection, broker connection and first claim)."]
    lines += ["", "PostgreSQL's view while the workers ran (bench/cluster/sample_waits.py: "
              "pg_stat_activity of the run's database, client backends, state active; pg_locks "
              "when one waits on a Lock), all runs of a row together. \"Lock wait\": samples "
              "with at least one backend waiting on wait_event_type Lock; \"ungranted locks\": "
              "share of samples with that lock awaited (most backends awaiting it at once; read "
              "from pg_locks a moment later, so a short wait may be missed there); \"top wait "
              "events\": share of the active backend-samples (\"no wait event\": running); "
              "\"idle in transaction\": backends inside a transaction waiting for their client.",
              "",
              "| system | workers | samples | mean active backends | mean idle in transaction "
              "| samples with a Lock wait (by event) | ungranted locks | top 3 wait events "
              "| no wait event |",
              "|---|---|---|---|---|---|---|---|---|"]
    ms_all = []
    for key, name in SCALE_SYSTEMS:
        for w in workers:
            ws = out[key][str(w)]["waits"]
            if not ws:
                lines.append("| %s | %d | - | - | - | - | - | - | - |" % (name, w))
                continue
            if ws["sample_ms"]:
                ms_all.append(ws["sample_ms"]["median"])
            by_event = ", ".join("%s %s" % (k, pct(v))
                                 for k, v in ws["lock_wait_sample_share_by_event"].items())
            ungranted = ", ".join("%s %s (%d)" % (lock_name(k), pct(v["sample_share"]),
                                                  v["max_at_once"])
                                  for k, v in list(ws["ungranted_locks"].items())[:3])
            if len(ws["ungranted_locks"]) > 3:
                ungranted += ", +%d more" % (len(ws["ungranted_locks"]) - 3)
            top = ", ".join("%s %s" % (e["event"], pct(e["backend_sample_share"]))
                            for e in ws["top_wait_events"])
            lines.append("| %s | %d | %d | %.2f | %.2f | %s%s | %s | %s | %s |" % (
                name, w, ws["samples"], ws["mean_active_backends"],
                ws["mean_idle_in_transaction"],
                pct(ws["lock_wait_sample_share"]), " (%s)" % by_event if by_event else "",
                ungranted or "none", top or "none", pct(ws["no_wait_event_share"])))
    waiting = []
    for key, name in SCALE_SYSTEMS:
        for w in workers:
            ws = out[key][str(w)]["waits"]
            for q in (ws or {}).get("statements_waiting_on_locks", [])[:3]:
                waiting.append("- %s, %d workers: waiting on %s in %s of the samples: `%s`" % (
                    name, w, q["wait_event"], pct(q["sample_share"]), q["statement"]))
            for q in (ws or {}).get("blocking_statements", [])[:3]:
                waiting.append("  - blocked by a backend %s in %s of the samples, (last) "
                               "statement: `%s`" % (q["blocker_state"], pct(q["sample_share"]),
                                                    q["statement"]))
    if waiting:
        lines += ["", "Statements seen waiting on a Lock, and whom they waited for "
                  "(pg_blocking_pids), the 3 most frequent per row:", ""]
        lines += waiting
    rates = [out[k][str(w)]["waits"].get("samples_per_second") for k, _ in SCALE_SYSTEMS
             for w in workers if out[k][str(w)]["waits"]]
    rates = [r for r in rates if r]
    if ms_all:
        lines += ["", "One sample's round trip: median %.1f ms (medians of the rows %.1f-%.1f); "
                  "%.0f-%.0f samples/s." % (statistics.median(ms_all), min(ms_all), max(ms_all),
                                            min(rates) if rates else 0,
                                            max(rates) if rates else 0)]
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
    scaling, d_lines = scaling_section(a.raw)
    meta = dict(kv.split("=", 1) for kv in a.meta if "=" in kv)
    if meta.get("skip_sweeps") == "1":
        sweep, small = {"skipped": True}, {"skipped": True}
        s_lines = ["### (b) Sweep A: skipped (SKIP_SWEEPS=1)"]
        c_lines = ["### (c) Cost per trial: skipped (SKIP_SWEEPS=1)"]
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
    text = "\n".join(head + [""] + q_lines + [""] + s_lines + [""] + c_lines +
                     ([""] + d_lines if d_lines else [])) + "\n"
    print(text, end="")
    if a.out:
        doc = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "revision": git_revision(), "machine": mach, "meta": meta,
               "queue": queue, "sweep_a": sweep, "cluster_small": small, "scaling": scaling,
               "table_markdown": text}
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
