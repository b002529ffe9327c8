"""An HTTP/2 connection that goes idle between its requests (Python's `h2` package).

Usage: h2_idle.py HOST PORT tls|h2c IDLE_SECONDS

On one connection: a GET, IDLE_SECONDS without a byte, a PING (a frame whose first byte comes
alone off a released read buffer), a POST with a body, IDLE_SECONDS again, and a GET. Prints one
line per step, e.g. "get 200 100" (status, body length), "ping acked", "post 200 7"; exits
non-zero if the server closes the connection or a step fails.
"""

import socket
import ssl
import sys
import time

import h2.config
import h2.connection
import h2.events


def connect(host, port, mode):
    sock = socket.create_connection((host, port), timeout=10)
    if mode == "tls":
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols(["h2"])
        sock = ctx.wrap_socket(sock, server_hostname="localhost")
    return sock


def pump(sock, conn, done):
    """Reads until `done(events)` is true for an event batch; returns every event seen."""
    seen = []
    while True:
        data = sock.recv(65536)
        if not data:
            sys.exit("the server closed the connection")
        events = conn.receive_data(data)
        sock.sendall(conn.data_to_send())
        seen.extend(events)
        if done(seen):
            return seen


def exchange(sock, conn, method, path, body=b""):
    sid = conn.get_next_available_stream_id()
    headers = [(":method", method), (":path", path), (":scheme", "https"),
               (":authority", "localhost")]
    if body:
        headers.append(("content-length", str(len(body))))
    conn.send_headers(sid, headers, end_stream=not body)
    if body:
        conn.send_data(sid, body, end_stream=True)
    sock.sendall(conn.data_to_send())
    events = pump(sock, conn, lambda ev: any(
        isinstance(e, h2.events.StreamEnded) and e.stream_id == sid for e in ev))
    status, length = None, 0
    for e in events:
        if isinstance(e, h2.events.ResponseReceived) and e.stream_id == sid:
            status = dict(e.headers)[b":status"].decode()
        elif isinstance(e, h2.events.DataReceived) and e.stream_id == sid:
            length += len(e.data)
            conn.acknowledge_received_data(e.flow_controlled_length, sid)
    sock.sendall(conn.data_to_send())
    return status, length


def main():
    host, port, mode, idle = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    sock = connect(host, port, mode)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    print("get %s %d" % exchange(sock, conn, "GET", "/?s=100"), flush=True)
    time.sleep(idle)
    conn.ping(b"12345678")
    sock.sendall(conn.data_to_send())
    pump(sock, conn, lambda ev: any(isinstance(e, h2.events.PingAckReceived) for e in ev))
    print("ping acked", flush=True)
    print("post %s %d" % exchange(sock, conn, "POST", "/?s=7", b"x" * 5000), flush=True)
    time.sleep(idle)
    print("get %s %d" % exchange(sock, conn, "GET", "/?s=20000"), flush=True)
    sock.close()


if __name__ == "__main__":
    main()
