"""A text origin for the compression tests, from Python's standard library (HTTP/1.1).

Usage: text_origin.py PORT. Every GET or HEAD answers a text body chosen by the query:
  n=BYTES      body length (default 4096): lines "%08d the quick brown fox ...\\n", cut at n
  chunked=1    chunked instead of Content-Length
  status=N     the status (default 200)
  type=T       the Content-Type (default text/html; charset=utf-8; "none" for none)
  h=NAME:VALUE an extra field (repeatable)
  ver=1.0      an HTTP/1.0 status line (then a Content-Length body)
  wait=PATH    send the first line, then wait (at most 10 s) until PATH exists, then the rest
Each response says which Accept-Encoding the request carried in x-seen-accept-encoding.
"""

import http.server
import os
import sys
import time
import urllib.parse

LINE = " the quick brown fox jumps over the lazy dog\n"


def body(n):
    out = bytearray()
    i = 0
    while len(out) < n:
        out += b"%08d" % i + LINE.encode()
        i += 1
    return bytes(out[:n])


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_HEAD(self):
        self.answer(head=True)

    def do_GET(self):
        self.answer(head=False)

    def answer(self, head):
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        one = lambda k, d=None: q.get(k, [d])[0]
        data = body(int(one("n", "4096")))
        chunked = one("chunked") == "1"
        if one("ver") == "1.0":
            self.protocol_version = "HTTP/1.0"
            chunked = False
        self.send_response(int(one("status", "200")))
        ctype = one("type", "text/html; charset=utf-8")
        if ctype != "none":
            self.send_header("content-type", ctype)
        for h in q.get("h", []):
            name, _, value = h.partition(":")
            self.send_header(name, value)
        seen = self.headers.get("accept-encoding", "none")
        self.send_header("x-seen-accept-encoding", seen)
        if chunked:
            self.send_header("transfer-encoding", "chunked")
        else:
            self.send_header("content-length", str(len(data)))
        self.end_headers()
        if head:
            return
        wait = one("wait")
        if wait:
            first = data.index(b"\n") + 1
            self.send(data[:first], chunked)
            self.wfile.flush()
            deadline = time.monotonic() + 10
            while not os.path.exists(wait) and time.monotonic() < deadline:
                time.sleep(0.02)
            data = data[first:]
        self.send(data, chunked)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def send(self, data, chunked):
        if chunked and data:
            self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")
        elif data:
            self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.serve_forever()


if __name__ == "__main__":
    main()
