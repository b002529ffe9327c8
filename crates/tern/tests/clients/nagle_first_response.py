"""First-response times of new TLS connections from a client that leaves Nagle on.

Python's ssl over a default socket is such a client (as are http.client, Java's
HttpURLConnection and many embedded clients): nothing here sets TCP_NODELAY.
Usage: nagle_first_response.py HOST PORT CONNECTIONS MODE
MODE: "tls13" (full handshakes) or "tls12-resumed" (one full TLS 1.2 handshake, then each
connection resumes the session: there the client's Finished is the last flight as well).
Prints one line: the milliseconds from sending each request to reading its response head,
comma-separated, in connection order.
"""

import socket
import ssl
import sys
import time


def first_response_ms(ctx, host, port, session=None):
    """The first response's time and the TLS session (to resume)."""
    raw = socket.create_connection((host, port), timeout=10)
    with ctx.wrap_socket(raw, server_hostname="localhost", session=session) as tls:
        if session is not None and not tls.session_reused:
            raise SystemExit("the TLS 1.2 session was not resumed")
        start = time.perf_counter()
        tls.sendall(b"GET /nagle HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            piece = tls.recv(4096)
            if not piece:
                raise SystemExit("connection closed before the response head")
            head += piece
        elapsed = (time.perf_counter() - start) * 1000.0
        if not head.startswith(b"HTTP/1.1 200"):
            raise SystemExit("unexpected response: %r" % head[:80])
        return elapsed, tls.session


def main():
    host, port, count, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if mode == "tls13":
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        times = [first_response_ms(ctx, host, port)[0] for _ in range(count)]
    elif mode == "tls12-resumed":
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        _, session = first_response_ms(ctx, host, port)
        times = [first_response_ms(ctx, host, port, session)[0] for _ in range(count)]
    else:
        raise SystemExit("unknown mode " + mode)
    print(",".join("%.3f" % t for t in times))


main()
