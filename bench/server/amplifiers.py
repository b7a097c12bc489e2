"""Amplifying clients for bench/run_server_hostile.sh (issue 52): requests that cost the
server much more than they cost the client, and clients that never read what they asked for.
  - --amplifiers N threads, each from its own loopback source address (127.0.4.N), send one
    expensive request after another: a column named a thousand times, a distinct `limit` per
    request (a cache key per request), a sort by a new parameter name per request, summaries
    grouped by new names, leaderboards and Pareto views at new sizes, a 30,000-character sort
    key. Each reads its answer and counts its status.
  - --nonreaders N sockets (127.0.5.N) ask for a kept model and never read a byte.
Runs until SIGTERM or --seconds, then prints one JSON line: requests sent and answers by
status. Standard library only (Debian's /usr/bin/python3)."""
import argparse
import json
import random
import signal
import socket
import threading
import time


def expensive_paths(study, rng):
    n = rng.randrange(1, 50000)
    name = "p%08x" % rng.getrandbits(32)
    yield f"/api/v1/studies/{study}/columns?fields=" + ",".join(["value"] * 1000)
    yield f"/api/v1/studies/{study}/columns?fields=number,value,params.hidden_layers&limit={n}"
    yield f"/api/v1/studies/{study}/trials?sort=params.{name}&limit=50"
    yield f"/api/v1/studies/{study}/trials?sort=value&limit={1 + n % 1000}&offset={n}"
    yield f"/api/v1/studies/{study}/summary?x=params.{name}&group=params.activation"
    yield f"/api/v1/studies/{study}/leaderboard?limit={1 + n % 100}"
    yield f"/api/v1/studies/{study}/pareto?limit={n}"
    yield f"/api/v1/studies/{study}/trials?sort=params." + "a" * 30000


def fetch(port, source, path, timeout):
    s = socket.socket()
    s.settimeout(timeout)
    try:
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                  "Connection: close\r\n\r\n".encode())
        head = s.recv(64)
        while s.recv(1 << 16):
            pass
        return head.split(b" ", 2)[1].decode() if head.startswith(b"HTTP/1.") else "no-status"
    except OSError as e:
        return type(e).__name__
    finally:
        s.close()


def amplify(port, study, index, stop, counts, lock):
    rng = random.Random(index)
    source = f"127.0.4.{1 + index}"
    while not stop.is_set():
        for path in expensive_paths(study, rng):
            if stop.is_set():
                break
            status = fetch(port, source, path, timeout=120)
            with lock:
                counts[status] = counts.get(status, 0) + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--study", required=True)
    ap.add_argument("--model-trial", type=int, required=True)
    ap.add_argument("--amplifiers", type=int, default=40)
    ap.add_argument("--nonreaders", type=int, default=60)
    ap.add_argument("--seconds", type=float, default=600)
    a = ap.parse_args()

    held = []
    for i in range(a.nonreaders):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.bind((f"127.0.5.{1 + i % 250}", 0))
        s.connect(("127.0.0.1", a.port))
        s.sendall(f"GET /api/v1/trials/{a.model_trial}/model HTTP/1.1\r\n"
                  f"Host: 127.0.0.1:{a.port}\r\n\r\n".encode())
        held.append(s)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    counts, lock = {}, threading.Lock()
    threads = [threading.Thread(target=amplify, args=(a.port, a.study, i, stop, counts, lock),
                                daemon=True) for i in range(a.amplifiers)]
    for t in threads:
        t.start()
    stop.wait(a.seconds)
    stop.set()
    for t in threads:
        t.join(timeout=5)
    # What the non-readers were answered, read only now: a status line, or nothing yet.
    heads = {}
    for s in held:
        s.setblocking(False)
        try:
            head = s.recv(64)
            key = head.split(b" ", 2)[1].decode() if head.startswith(b"HTTP/1.") else "other"
        except OSError:
            key = "nothing-sent"
        heads[key] = heads.get(key, 0) + 1
        s.close()
    print(json.dumps({"amplifiers": a.amplifiers, "answers": counts,
                      "nonreaders": a.nonreaders, "nonreader_answers": heads}), flush=True)


if __name__ == "__main__":
    main()
