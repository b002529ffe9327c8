"""A WebSocket client over HTTP/2 (RFC 8441 extended CONNECT) for the tunnel tests.

Python's `websockets` does not speak HTTP/2, so this client joins two libraries that are not
tern's code: `h2` (the HTTP/2 connection: SETTINGS, HEADERS with `:protocol`, DATA, flow
control, RST_STREAM) and the sans-I/O protocol layer of `websockets` (`websockets.protocol`:
framing, masking, ping/pong and the close handshake) over the stream's DATA.

Usage: ws_h2_client.py (h2|h2c) HOST PORT SCENARIO PATH [PROTOCOL]
h2 is TLS with ALPN h2 (certificate not verified), h2c plain HTTP/2 with prior knowledge.
Prints "settings enable_connect_protocol N" (N absent: "-") first, then per scenario:
- echo: text and binary echo, a 1 MiB message (many flow-control windows both ways), a ping
  answered by a pong, a close with 1000 "client done" on the first stream; on a second stream
  of the same connection, the server's close with 4001 "server says bye". One "ok STEP" line per
  step; exits non-zero at the first failure.
- answer: sends an extended CONNECT for PROTOCOL (default websocket; "-" for a plain CONNECT)
  and prints "status N", "header NAME: VALUE" lines, "body TEXT" and "end" or "reset CODE".
- reset: opens a WebSocket, checks an echo, then resets the stream (CANCEL).
- abort: opens a WebSocket and asks the server to reset its connection ("abort"); prints
  "reset CODE" for the RST_STREAM tern sends.
- idle: opens a WebSocket and sends nothing; prints "reset CODE" or "end" and when it came
  (from when the request was sent).
Every wait is bounded (10 s a step, 60 s the whole run).
"""

import os
import socket
import ssl
import sys
import time

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings
from websockets.frames import Opcode
from websockets.protocol import Protocol, Side

STEP = 10.0
DEADLINE = time.monotonic() + 60.0
MAX_SIZE = 16 * 1024 * 1024


def fail(step):
    raise SystemExit("FAILED: " + step)


def check(step, ok):
    if not ok:
        fail(step)
    print("ok " + step, flush=True)


class Stream:
    """What arrived on one stream."""

    def __init__(self):
        self.headers = None
        self.data = bytearray()
        self.ended = False
        self.reset = None


class Connection:
    """One HTTP/2 client connection, driven by blocking reads with a timeout."""

    def __init__(self, mode, host, port):
        sock = socket.create_connection((host, port), timeout=STEP)
        self.authority = "localhost:%d" % port
        self.scheme = "http"
        if mode == "h2":
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            ctx.set_alpn_protocols(["h2"])
            sock = ctx.wrap_socket(sock, server_hostname="localhost")
            if sock.selected_alpn_protocol() != "h2":
                fail("ALPN h2")
            self.scheme = "https"
        self.sock = sock
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.h2.initiate_connection()
        self.streams = {}
        self.settings = None
        self.flush()
        self.wait(lambda: self.settings is not None, "the server's SETTINGS")

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)

    def wait(self, done, what, timeout=STEP):
        """Reads and handles frames until done() holds; fails after `timeout` seconds."""
        until = min(time.monotonic() + timeout, DEADLINE)
        while not done():
            left = until - time.monotonic()
            if left <= 0:
                fail("timed out waiting for " + what)
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not data:
                fail("connection closed waiting for " + what)
            for event in self.h2.receive_data(data):
                self.handle(event)
            self.flush()

    def handle(self, event):
        if isinstance(event, h2.events.RemoteSettingsChanged):
            if self.settings is None:
                self.settings = {}
            for code, change in event.changed_settings.items():
                self.settings[code] = change.new_value
        elif isinstance(event, h2.events.ResponseReceived):
            self.streams[event.stream_id].headers = event.headers
        elif isinstance(event, h2.events.DataReceived):
            self.streams[event.stream_id].data += event.data
            # The data is taken: the server may send as much again.
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            self.streams[event.stream_id].ended = True
        elif isinstance(event, h2.events.StreamReset):
            self.streams[event.stream_id].reset = int(event.error_code)

    def connect(self, path, protocol="websocket"):
        """Sends an extended CONNECT (a plain one for protocol "-"); the stream id."""
        sid = self.h2.get_next_available_stream_id()
        if protocol == "-":
            headers = [(":method", "CONNECT"), (":authority", self.authority)]
        else:
            headers = [
                (":method", "CONNECT"),
                (":protocol", protocol),
                (":scheme", self.scheme),
                (":path", path),
                (":authority", self.authority),
                ("sec-websocket-version", "13"),
                ("origin", "%s://%s" % (self.scheme, self.authority)),
            ]
        self.streams[sid] = Stream()
        self.h2.send_headers(sid, headers)
        self.flush()
        return sid

    def answered(self, sid):
        s = self.streams[sid]
        self.wait(lambda: s.headers is not None or s.reset is not None, "a response")
        if s.headers is None:
            return None
        return int(dict(s.headers)[b":status"])

    def send(self, sid, data, end=False):
        """Sends `data` on the stream as the windows allow (waiting for WINDOW_UPDATEs)."""
        view = memoryview(data)
        while view:
            window = min(self.h2.local_flow_control_window(sid), self.h2.max_outbound_frame_size)
            if window <= 0:
                before = self.h2.local_flow_control_window(sid)
                self.wait(lambda: self.h2.local_flow_control_window(sid) > before, "window")
                continue
            self.h2.send_data(sid, bytes(view[:window]))
            view = view[window:]
            self.flush()
        if end:
            self.h2.end_stream(sid)
            self.flush()


class WebSocket:
    """The websockets library's client protocol over one stream's DATA."""

    def __init__(self, conn, path):
        self.conn = conn
        self.sid = conn.connect(path)
        status = conn.answered(self.sid)
        if status != 200:
            fail("extended CONNECT answered %s" % status)
        headers = dict(conn.streams[self.sid].headers)
        if b"sec-websocket-accept" in headers:
            fail("sec-websocket-accept in the 200 (RFC 8441 has none)")
        self.ws = Protocol(Side.CLIENT, max_size=MAX_SIZE)
        self.frames = []
        self.sent_end = False
        self.eof = False

    def flush(self):
        for data in self.ws.data_to_send():
            if data == b"":
                # The library's end of stream: END_STREAM.
                if not self.sent_end:
                    self.conn.send(self.sid, b"", end=True)
                    self.sent_end = True
            else:
                self.conn.send(self.sid, data)

    def pump(self):
        """Feeds what arrived on the stream to the library; whether anything new came."""
        s = self.conn.streams[self.sid]
        fed = False
        if s.data:
            self.ws.receive_data(bytes(s.data))
            s.data.clear()
            fed = True
        if s.ended and not self.eof:
            self.ws.receive_eof()
            self.eof = True
            fed = True
        self.frames.extend(self.ws.events_received())
        self.flush()
        return fed

    def next_frame(self, what):
        def ready():
            self.pump()
            return bool(self.frames) or self.conn.streams[self.sid].reset is not None

        self.conn.wait(ready, what)
        if not self.frames:
            fail("stream reset waiting for " + what)
        return self.frames.pop(0)

    def recv(self, what):
        """The next message (continuation frames joined)."""
        first = self.next_frame(what)
        parts = [first.data]
        frame = first
        while not frame.fin:
            frame = self.next_frame(what)
            parts.append(frame.data)
        data = b"".join(parts)
        return first.opcode, data

    def send_text(self, text):
        self.ws.send_text(text.encode())
        self.flush()

    def send_binary(self, data):
        self.ws.send_binary(data)
        self.flush()

    def wait_end(self, what):
        """Waits for the stream's end (or reset), feeding the library what comes first."""
        s = self.conn.streams[self.sid]

        def ended():
            self.pump()
            return s.ended or s.reset is not None

        self.conn.wait(ended, what)


def echo(conn, path):
    ws = WebSocket(conn, path)
    ws.send_text("hello")
    check("text echo", ws.recv("text echo") == (Opcode.TEXT, b"hello"))
    ws.send_binary(b"\x00\x01\xfe\xff")
    check("binary echo", ws.recv("binary echo") == (Opcode.BINARY, b"\x00\x01\xfe\xff"))
    big = os.urandom(1024 * 1024 + 123)
    ws.send_binary(big)
    check("1 MiB echo", ws.recv("1 MiB echo") == (Opcode.BINARY, big))
    ws.ws.send_ping(b"are you there")
    ws.flush()
    check("ping pong", ws.recv("pong") == (Opcode.PONG, b"are you there"))
    ws.ws.send_close(1000, "client done")
    ws.flush()
    opcode, _ = ws.recv("the close echoed")
    # The server closes its connection after the close handshake: tern ends the stream, and
    # the client ends its side in turn.
    ws.wait_end("the end of the stream")
    s = conn.streams[ws.sid]
    check(
        "client close",
        opcode == Opcode.CLOSE and ws.ws.close_code == 1000 and s.ended and s.reset is None,
    )
    if not ws.sent_end:
        conn.send(ws.sid, b"", end=True)

    ws = WebSocket(conn, path)
    ws.send_text("close-4001")
    opcode, _ = ws.recv("the server's close")
    ws.wait_end("the end of the stream")
    rcvd = ws.ws.close_rcvd
    check(
        "server close 4001",
        opcode == Opcode.CLOSE
        and rcvd is not None
        and rcvd.code == 4001
        and rcvd.reason == "server says bye",
    )
    if not ws.sent_end:
        conn.send(ws.sid, b"", end=True)


def answer(conn, path, protocol):
    sid = conn.connect(path, protocol)
    status = conn.answered(sid)
    s = conn.streams[sid]
    if status is None:
        print("reset %d" % s.reset, flush=True)
        return
    print("status %d" % status, flush=True)
    for name, value in s.headers:
        print("header %s: %s" % (name.decode(), value.decode()), flush=True)
    conn.wait(lambda: s.ended or s.reset is not None, "the end of the response")
    body = s.data.decode(errors="replace").replace("\r\n", "\n").replace("\n", "|")
    print("body " + body, flush=True)
    # A reset after END_STREAM (NO_ERROR: the request side was still open) is no failure.
    print("end" if s.ended else "reset %d" % s.reset, flush=True)


def reset(conn, path):
    ws = WebSocket(conn, path)
    ws.send_text("before reset")
    check("echo before the reset", ws.recv("echo") == (Opcode.TEXT, b"before reset"))
    conn.h2.reset_stream(ws.sid, h2.errors.ErrorCodes.CANCEL)
    conn.flush()
    # Another stream on the connection still works: only the stream was reset.
    ws = WebSocket(conn, path)
    ws.send_text("after reset")
    check("echo on a new stream", ws.recv("echo") == (Opcode.TEXT, b"after reset"))


def abort(conn, path):
    ws = WebSocket(conn, path)
    ws.send_text("abort")
    s = conn.streams[ws.sid]
    conn.wait(lambda: s.reset is not None or s.ended, "the reset")
    print("reset %d" % s.reset if s.reset is not None else "end", flush=True)


def idle(conn, path):
    # From before the request: the tunnel's inactivity counts from after tern sent the 200.
    opened = time.monotonic()
    ws = WebSocket(conn, path)
    s = conn.streams[ws.sid]
    conn.wait(lambda: s.reset is not None or s.ended, "the tunnel's end", timeout=30)
    took = int((time.monotonic() - opened) * 1000)
    print(("reset %d" % s.reset if s.reset is not None else "end") + " after %d ms" % took)


def main():
    mode, host, port, scenario, path = sys.argv[1:6]
    protocol = sys.argv[6] if len(sys.argv) > 6 else "websocket"
    conn = Connection(mode, host, int(port))
    value = conn.settings.get(h2.settings.SettingCodes.ENABLE_CONNECT_PROTOCOL)
    print("settings enable_connect_protocol %s" % ("-" if value is None else value), flush=True)
    if scenario == "echo":
        echo(conn, path)
    elif scenario == "answer":
        answer(conn, path, protocol)
    elif scenario == "reset":
        reset(conn, path)
    elif scenario == "abort":
        abort(conn, path)
    elif scenario == "idle":
        idle(conn, path)
    else:
        fail("unknown scenario " + scenario)
    conn.h2.close_connection()
    conn.flush()
    conn.sock.close()


main()
