"""The parts of bench/soak.sh's load that `tern bench` does not make: uploads and slow clients.

Usage: soak_clients.py HOST PORT SECONDS UPLOADERS SLOW

Runs for SECONDS over TLS (the certificate is not verified), then prints one JSON line:
  uploads          POSTs answered 2xx: UPLOADERS threads, one after the other on a keep-alive
                   connection each, 256 KiB bodies alternately with Content-Length and chunked
  upload_errors    POSTs that failed (not 2xx, or an exception): unexpected
  slow_opened      slow connections opened: SLOW of them at any time, each a TLS connection
                   that sends a request head one header line at a time, a line every 2 s, so
                   the frontend's `http_request` timeout ends it (408); then another opens
  slow_timed_out   slow connections tern answered 408 and closed: the injected errors
  slow_other       slow connections that ended otherwise (no 408): unexpected
Every loop is bounded by SECONDS; each socket operation by a 30 s timeout.
"""

import http.client
import json
import socket
import ssl
import sys
import threading
import time

HOST, PORT, SECONDS = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
UPLOADERS, SLOW = int(sys.argv[4]), int(sys.argv[5])
DEADLINE = time.monotonic() + SECONDS
BODY = b"u" * (256 * 1024)
CONTEXT = ssl.create_default_context()
CONTEXT.check_hostname = False
CONTEXT.verify_mode = ssl.CERT_NONE

counts = {"uploads": 0, "upload_errors": 0, "slow_opened": 0, "slow_timed_out": 0,
          "slow_other": 0}
lock = threading.Lock()


def count(key):
    with lock:
        counts[key] += 1


def chunks():
    for i in range(0, len(BODY), 16 * 1024):
        yield BODY[i:i + 16 * 1024]


def uploader():
    conn = None
    n = 0
    while time.monotonic() < DEADLINE:
        try:
            if conn is None:
                conn = http.client.HTTPSConnection(HOST, PORT, timeout=30, context=CONTEXT)
            if n % 2 == 0:
                conn.request("POST", "/upload", body=BODY,
                             headers={"Content-Type": "application/octet-stream"})
            else:
                conn.request("POST", "/upload", body=chunks(), encode_chunked=True,
                             headers={"Content-Type": "application/octet-stream"})
            resp = conn.getresponse()
            resp.read()
            if 200 <= resp.status < 300:
                count("uploads")
            else:
                count("upload_errors")
            if resp.getheader("connection", "").lower() == "close":
                conn.close()
                conn = None
        except Exception:  # noqa: BLE001 - any failure is an unexpected error, counted
            count("upload_errors")
            if conn is not None:
                conn.close()
            conn = None
        n += 1
    if conn is not None:
        conn.close()


def slow_client():
    while time.monotonic() < DEADLINE:
        try:
            raw = socket.create_connection((HOST, PORT), timeout=30)
            s = CONTEXT.wrap_socket(raw)
        except Exception:  # noqa: BLE001
            count("slow_other")
            time.sleep(1)
            continue
        count("slow_opened")
        got = b""
        try:
            s.sendall(b"GET /slow HTTP/1.1\r\nHost: localhost\r\n")
            s.settimeout(2)
            i = 0
            while time.monotonic() < DEADLINE:
                try:
                    data = s.recv(4096)
                    if not data:
                        break
                    got += data
                except socket.timeout:
                    s.sendall(b"X-Slow-%d: 1\r\n" % i)
                    i += 1
        except Exception:  # noqa: BLE001 - a reset after the 408 is the expected end too
            pass
        finally:
            s.close()
        if got.startswith(b"HTTP/1.1 408"):
            count("slow_timed_out")
        elif time.monotonic() < DEADLINE:
            count("slow_other")


threads = [threading.Thread(target=uploader) for _ in range(UPLOADERS)]
threads += [threading.Thread(target=slow_client) for _ in range(SLOW)]
for t in threads:
    t.start()
for t in threads:
    t.join(SECONDS + 90)
print(json.dumps(counts, separators=(",", ":")))
