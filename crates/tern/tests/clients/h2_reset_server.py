"""An h2c server (Python's h2 package) that resets every stream in the middle of its response.

Usage: h2_reset_server.py [websocket]
For each request it sends a 200 with content-length 100000, 1000 bytes of DATA, then
RST_STREAM with INTERNAL_ERROR: what a server that fails mid-response does. With `websocket`
it announces SETTINGS_ENABLE_CONNECT_PROTOCOL and answers an extended CONNECT (RFC 8441) with
a 200 without length, 1000 bytes of tunnel data, then RST_STREAM with CANCEL: a WebSocket
server whose connection broke. Prints "port N" once listening on a loopback port; serves
connections one after another, each for at most 10 seconds.
"""

import socket
import sys

import h2.config
import h2.connection
import h2.events
import h2.settings


WEBSOCKET = sys.argv[1:] == ["websocket"]


def serve(conn_sock):
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    if WEBSOCKET:
        conn.local_settings = h2.settings.Settings(
            client=False,
            initial_values={h2.settings.SettingCodes.ENABLE_CONNECT_PROTOCOL: 1},
        )
    conn.initiate_connection()
    conn_sock.sendall(conn.data_to_send())
    conn_sock.settimeout(10)
    while True:
        data = conn_sock.recv(65536)
        if not data:
            return
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.RequestReceived):
                sid = event.stream_id
                if WEBSOCKET:
                    conn.send_headers(sid, [(":status", "200")])
                    conn.send_data(sid, b"x" * 1000)
                    conn.reset_stream(sid, error_code=h2.errors.ErrorCodes.CANCEL)
                    continue
                conn.send_headers(sid, [(":status", "200"), ("content-length", "100000")])
                conn.send_data(sid, b"x" * 1000)
                conn.reset_stream(sid, error_code=h2.errors.ErrorCodes.INTERNAL_ERROR)
        conn_sock.sendall(conn.data_to_send())


def main():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(f"port {listener.getsockname()[1]}", flush=True)
    for _ in range(100):
        conn_sock, _ = listener.accept()
        try:
            serve(conn_sock)
        except (OSError, h2.exceptions.ProtocolError):
            pass
        finally:
            conn_sock.close()


if __name__ == "__main__":
    main()
