"""Hostile clients for bench/run_server_hostile.sh: idle sockets, slowloris sockets (one
header line every 2 s, never the end of the headers) and Server-Sent Events clients, held
open until SIGTERM or --seconds. Each kind comes from its own loopback source addresses
(127.0.0.N), as an attacker's many hosts would. Prints one JSON line when it stops: how many
sockets of each kind were held and how many event streams the server accepted or refused.
Standard library only (Debian's /usr/bin/python3)."""
import argparse
import json
import selectors
import signal
import socket
import time


def connect(port, source):
    s = socket.socket()
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--idle", type=int, default=30)
    ap.add_argument("--slow", type=int, default=30)
    ap.add_argument("--sse", type=int, default=500)
    ap.add_argument("--sse-sources", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=600)
    a = ap.parse_args()
    host = f"Host: 127.0.0.1:{a.port}\r\n".encode()
    held = {"idle": [], "slow": [], "sse": []}
    for i in range(a.idle):
        held["idle"].append(connect(a.port, f"127.0.1.{1 + i % 10}"))
    for i in range(a.slow):
        s = connect(a.port, f"127.0.2.{1 + i % 10}")
        s.send(b"GET /healthz HTTP/1.1\r\n" + host)
        held["slow"].append(s)
    sel = selectors.DefaultSelector()
    answers = {}
    for i in range(a.sse):
        s = connect(a.port, f"127.0.3.{1 + i % a.sse_sources}")
        s.send(b"GET /api/v1/events HTTP/1.1\r\n" + host + b"\r\n")
        held["sse"].append(s)
        answers[s] = b""
        sel.register(s, selectors.EVENT_READ)
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    end = time.monotonic() + a.seconds
    next_line = time.monotonic() + 2
    line = 0
    while not stop[0] and time.monotonic() < end:
        for key, _ in sel.select(timeout=0.5):
            try:
                data = key.fileobj.recv(65536)
            except OSError:
                data = b""
            if not data:
                sel.unregister(key.fileobj)
                continue
            if len(answers[key.fileobj]) < 4096:
                answers[key.fileobj] += data
        if time.monotonic() >= next_line:
            line += 1
            for s in held["slow"]:
                try:
                    s.send(f"X-Slow-{line}: a\r\n".encode())
                except OSError:
                    pass
            next_line += 2
    accepted = sum(1 for v in answers.values() if b"retry: 2000" in v)
    refused = sum(1 for v in answers.values() if v.startswith(b"HTTP/1.1 4") or
                  v.startswith(b"HTTP/1.1 5"))
    print(json.dumps({"idle": len(held["idle"]), "slow": len(held["slow"]),
                      "sse": len(held["sse"]), "sse_accepted": accepted,
                      "sse_refused": refused, "slow_lines_sent": line}), flush=True)


if __name__ == "__main__":
    main()
