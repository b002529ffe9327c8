#!/usr/bin/env python3
"""Idle and slow client connections for bench/idle-memory.sh.

Opens N connections to a proxy in one of these modes, then reports the proxy's resident memory
(VmRSS of the given PIDs, summed) before and with them open, as one JSON line:

  plain      plain TCP, connected, nothing sent (a connection waiting for its first request)
  plain-req  plain HTTP/1.1, one request answered, then idle on keep-alive
  tls        TLS 1.3 handshake done, nothing sent
  tls-req    TLS, one HTTP/1.1 request answered, then idle on keep-alive
  h2-req     TLS with ALPN h2, one request answered, then idle (needs Python's `h2`)
  slow       slowloris: plain TCP, a request head sent one byte every --interval seconds and
             never finished; prints `ready` once all are open, keeps dribbling for --hold
             seconds (while the caller measures a well-behaved client), then reports

Python's standard library only (plus `h2` for h2-req), so any machine with python3 runs it.
"""
import argparse
import json
import socket
import ssl
import sys
import time

SLOW_HEAD = b"GET /?s=100 HTTP/1.1\r\nHost: bench\r\nX-Slow: " + b"a" * 4000


def rss_kb(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except FileNotFoundError:
            sys.exit(f"process {pid} is gone")
    return total


def tls_context(alpn):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.set_alpn_protocols([alpn])
    return ctx


def read_response(sock):
    """Reads one response with a Content-Length body (what `tern term` sends)."""
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the response head")
        got += chunk
    head, body = got.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed in the response body")
        body += chunk


def request(sock):
    sock.sendall(b"GET /?s=100 HTTP/1.1\r\nHost: bench\r\n\r\n")
    read_response(sock)


def h2_request(sock):
    import h2.config
    import h2.connection
    import h2.events

    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    sid = conn.get_next_available_stream_id()
    conn.send_headers(
        sid,
        [(":method", "GET"), (":path", "/?s=100"), (":scheme", "https"), (":authority", "bench")],
        end_stream=True,
    )
    sock.sendall(conn.data_to_send())
    while True:
        data = sock.recv(65536)
        if not data:
            raise ConnectionError("closed before the response ended")
        events = conn.receive_data(data)
        sock.sendall(conn.data_to_send())
        if any(isinstance(e, h2.events.StreamEnded) for e in events):
            return conn


def open_one(mode, host, port, contexts):
    sock = socket.create_connection((host, port), timeout=30)
    keep = None
    if mode in ("tls", "tls-req"):
        sock = contexts["http/1.1"].wrap_socket(sock)
    elif mode == "h2-req":
        sock = contexts["h2"].wrap_socket(sock)
    if mode in ("plain-req", "tls-req"):
        request(sock)
    elif mode == "h2-req":
        keep = h2_request(sock)
    elif mode == "slow":
        sock.sendall(SLOW_HEAD[:1])
    return sock, keep


def dribble(socks, sent, interval, hold):
    """Sends the next head byte on every slow connection each `interval` s, for `hold` s."""
    end = time.monotonic() + hold
    closed = 0
    while time.monotonic() < end:
        start = time.monotonic()
        for i, sock in enumerate(socks):
            if sock is None:
                continue
            try:
                sock.send(SLOW_HEAD[sent[i] : sent[i] + 1])
                sent[i] = min(sent[i] + 1, len(SLOW_HEAD) - 1)
            except OSError:
                socks[i] = None
                closed += 1
        time.sleep(max(0.0, interval - (time.monotonic() - start)))
    return closed


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["plain", "plain-req", "tls", "tls-req", "h2-req", "slow"])
    p.add_argument("port", type=int)
    p.add_argument("conns", type=int)
    p.add_argument("pids", type=int, nargs="+", help="the proxy's processes (RSS summed)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--settle", type=float, default=2.0, help="seconds before each RSS reading")
    p.add_argument("--interval", type=float, default=2.0, help="slow: seconds between bytes")
    p.add_argument("--hold", type=float, default=20.0, help="slow: seconds kept dribbling")
    args = p.parse_args()

    contexts = {"http/1.1": tls_context("http/1.1"), "h2": tls_context("h2")}
    # One connection first, so that lazily made state (pools, tables) is not counted per
    # connection.
    warm = open_one(args.mode, args.host, args.port, contexts)
    time.sleep(args.settle)
    before = rss_kb(args.pids)
    held, started = [], time.monotonic()
    for _ in range(args.conns):
        held.append(open_one(args.mode, args.host, args.port, contexts))
    opened_s = time.monotonic() - started
    closed = 0
    if args.mode == "slow":
        print("ready", flush=True)
        socks = [s for s, _ in held]
        closed = dribble(socks, [1] * len(socks), args.interval, args.hold)
    else:
        time.sleep(args.settle)
    after = rss_kb(args.pids)
    print(
        json.dumps(
            {
                "mode": args.mode,
                "conns": args.conns,
                "opened_s": round(opened_s, 1),
                "closed_by_proxy": closed,
                "rss_before_kb": before,
                "rss_after_kb": after,
                "bytes_per_conn": round((after - before) * 1024 / args.conns),
            }
        ),
        flush=True,
    )
    del warm, held


if __name__ == "__main__":
    main()
