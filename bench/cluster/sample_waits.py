#!/usr/bin/python3
"""PostgreSQL's own view of what one database's client backends wait on, sampled.

  /usr/bin/python3 bench/cluster/sample_waits.py --port PORT --db DB --out FILE
      [--host 127.0.0.1] [--user layerlab] [--interval-ms 20]

Holds ONE psql (-X -A -t, connected to DB, password from PGPASSWORD) on a stdin pipe and asks
it, every --interval-ms, one statement over pg_stat_activity (client backends of DB, this
sampler's own backend left out) and, only when some backend of DB waits on wait_event_type
'Lock', over pg_locks: the ungranted locks of DB's backends, grouped by locktype, relation
(relation::regclass, resolved in DB) or advisory key, and mode; the statements waiting; and
the backends they wait for (pg_blocking_pids) with their state and (last) statement.
pg_locks is read a moment after pg_stat_activity, so a short wait may be gone from it. Runs
until SIGTERM or SIGINT, then finishes the sample in flight and exits. Writes one JSON object
per sample to FILE:

  {"t": server clock (epoch seconds), "ms": round trip of the sample,
   "active": active backends, "idle_in_tx": backends idle in a transaction, "conns": all,
   "waits": {"Lock:transactionid": 2, "-": 1, ...}   active backends per wait_event_type:
                                                      wait_event ("-": no wait event: on CPU),
   "locks": {"transactionid||ShareLock": 2, "advisory|7809643637400461667|ExclusiveLock": 1},
   "lock_queries": {"transactionid|UPDATE studies SET ...": 2},   the statements (first 200
                                                      characters) of the backends waiting on a
                                                      Lock, per wait event
   "blockers": {"transactionid|idle in transaction|UPDATE ...": 2}}   who they wait for
                                                      (pg_blocking_pids): per wait event, the
                                                      blocker's state and its (last) statement

The first line is written (and flushed) right after the first sample, so a caller can wait for
FILE to be non-empty before it starts the work it wants sampled. Exits 1 when psql cannot
connect or dies.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

# Prepared once (planned once); each sample is `EXECUTE sample; SELECT 'E';`.
PREPARE = """PREPARE sample AS WITH a AS (SELECT pid, state, wait_event_type, wait_event, query FROM pg_stat_activity
  WHERE datname = current_database() AND backend_type = 'client backend'
  AND pid <> pg_backend_pid())
SELECT 'S', extract(epoch FROM clock_timestamp())::text,
  (count(*) FILTER (WHERE state = 'active'))::text,
  (count(*) FILTER (WHERE state LIKE 'idle in transaction%'))::text, count(*)::text FROM a
UNION ALL
SELECT 'W', coalesce(wait_event_type, '-'), coalesce(wait_event, '-'), count(*)::text, ''
  FROM a WHERE state = 'active' GROUP BY 2, 3
UNION ALL
SELECT 'Q', wait_event, left(regexp_replace(query, '[|\\s]+', ' ', 'g'), 200),
  count(*)::text, '' FROM a WHERE state = 'active' AND wait_event_type = 'Lock' GROUP BY 2, 3
UNION ALL
SELECT 'B', a.wait_event, b.state, left(regexp_replace(b.query, '[|\\s]+', ' ', 'g'), 200),
  count(*)::text
  FROM a CROSS JOIN LATERAL unnest(pg_blocking_pids(a.pid)) AS bp(pid)
  JOIN pg_stat_activity b ON b.pid = bp.pid
  WHERE a.state = 'active' AND a.wait_event_type = 'Lock' GROUP BY 2, 3, 4
UNION ALL
SELECT 'L', l.locktype,
  CASE WHEN l.locktype = 'advisory' AND l.objsubid = 1
         THEN ((l.classid::int8 << 32) | l.objid::int8)::text
       WHEN l.locktype = 'advisory' THEN l.classid::text || ':' || l.objid::text
       ELSE coalesce(l.relation::regclass::text, '') END,
  l.mode, count(*)::text
  FROM pg_locks l
  WHERE NOT l.granted AND l.pid IN (SELECT pid FROM a)
    AND EXISTS (SELECT 1 FROM a WHERE wait_event_type = 'Lock')
  GROUP BY 2, 3, 4;
"""
QUERY = "EXECUTE sample; SELECT 'E';\n"

stop = False


def on_signal(signum, frame):
    global stop
    stop = True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", required=True)
    p.add_argument("--db", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--user", default="layerlab")
    p.add_argument("--interval-ms", type=float, default=20)
    a = p.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    env = dict(os.environ, PGAPPNAME="layerlab-wait-sampler", PGCONNECT_TIMEOUT="10")
    psql = subprocess.Popen(
        ["psql", "-X", "-q", "-A", "-t", "-F", "|", "-v", "ON_ERROR_STOP=1", "-h", a.host,
         "-p", str(a.port), "-U", a.user, "-d", a.db],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1, env=env)
    interval = a.interval_ms / 1000
    n = 0
    with open(a.out, "w") as out:
        psql.stdin.write("SET jit = off;\n" + PREPARE)
        next_at = time.monotonic()
        while not stop:
            t0 = time.monotonic()
            try:
                psql.stdin.write(QUERY)
                psql.stdin.flush()
            except (BrokenPipeError, OSError):
                break
            sample = {"t": None, "ms": None, "active": 0, "idle_in_tx": 0, "conns": 0,
                      "waits": {}, "locks": {}, "lock_queries": {}, "blockers": {}}
            ended = False
            for line in psql.stdout:
                f = line.rstrip("\n").split("|")
                if f[0] == "E":
                    ended = True
                    break
                if f[0] == "S" and len(f) >= 5:
                    sample["t"] = float(f[1])
                    sample["active"], sample["idle_in_tx"], sample["conns"] = map(int, f[2:5])
                elif f[0] == "W" and len(f) >= 4:
                    key = "-" if f[1] == "-" else f[1] + ":" + f[2]
                    sample["waits"][key] = sample["waits"].get(key, 0) + int(f[3])
                elif f[0] == "Q" and len(f) >= 4:
                    sample["lock_queries"][f[1] + "|" + f[2]] = int(f[3])
                elif f[0] == "B" and len(f) >= 5:
                    sample["blockers"]["|".join(f[1:4])] = int(f[4])
                elif f[0] == "L" and len(f) >= 5:
                    sample["locks"]["|".join(f[1:4])] = int(f[4])
            if not ended:
                break  # psql exited (could not connect, or the server went away)
            sample["ms"] = round((time.monotonic() - t0) * 1000, 3)
            out.write(json.dumps(sample, separators=(",", ":")) + "\n")
            n += 1
            if n == 1:
                out.flush()
            next_at += interval
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                next_at = time.monotonic()  # behind: sample again now, do not catch up
    try:
        psql.stdin.close()
    except OSError:
        pass
    try:
        psql.wait(timeout=10)
    except subprocess.TimeoutExpired:
        psql.kill()
        psql.wait()
    if n == 0:
        print("sample_waits.py: no sample from database %s (psql exited %s)" % (
            a.db, psql.returncode), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
