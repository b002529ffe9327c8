"""A gRPC server (Python's grpcio) for the tests of gRPC through tern.

Methods of service tern.Test take and return raw bytes (no protobuf):
  Echo     unary: the request back, with trailing metadata x-trailer: done
  Fail     unary: status NOT_FOUND, message "no such thing"
  Count    server streaming: the request is N; answers b"0" .. b"N-1"
  Sum      client streaming: answers the total length of the messages, as text
  Chat     bidirectional: each message back as it arrives
  Deadline unary: the time the call has left on the server (grpc-timeout), as text
  Hold     unary: waits up to 20 s; prints "cancelled Hold" when the client cancels

Usage: grpc_server.py [--tls CERT KEY]. Prints "port N" once serving (plain h2c, or TLS
with ALPN h2 when --tls is given).
"""

import sys
import threading
import time
from concurrent import futures

import grpc


def echo(request, context):
    context.set_trailing_metadata((("x-trailer", "done"),))
    return request


def fail(request, context):
    context.abort(grpc.StatusCode.NOT_FOUND, "no such thing")


def count(request, context):
    for i in range(int(request)):
        yield str(i).encode()


def total(requests, context):
    return str(sum(len(r) for r in requests)).encode()


def chat(requests, context):
    for r in requests:
        yield r


def deadline(request, context):
    left = context.time_remaining()
    return b"none" if left is None else f"{left:.3f}".encode()


def hold(request, context):
    done = threading.Event()

    def cancelled():
        if not done.is_set():
            print("cancelled Hold", flush=True)

    context.add_callback(cancelled)
    for _ in range(200):
        if not context.is_active():
            return b""
        time.sleep(0.1)
    done.set()
    return b"held"


def main():
    handlers = {
        "Echo": grpc.unary_unary_rpc_method_handler(echo),
        "Fail": grpc.unary_unary_rpc_method_handler(fail),
        "Count": grpc.unary_stream_rpc_method_handler(count),
        "Sum": grpc.stream_unary_rpc_method_handler(total),
        "Chat": grpc.stream_stream_rpc_method_handler(chat),
        "Deadline": grpc.unary_unary_rpc_method_handler(deadline),
        "Hold": grpc.unary_unary_rpc_method_handler(hold),
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("tern.Test", handlers),)
    )
    if len(sys.argv) == 4 and sys.argv[1] == "--tls":
        with open(sys.argv[2], "rb") as c, open(sys.argv[3], "rb") as k:
            creds = grpc.ssl_server_credentials(((k.read(), c.read()),))
        port = server.add_secure_port("127.0.0.1:0", creds)
    else:
        port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"port {port}", flush=True)
    # Bounded: the test kills the server; it never outlives 10 minutes.
    server.wait_for_termination(timeout=600)


if __name__ == "__main__":
    main()
