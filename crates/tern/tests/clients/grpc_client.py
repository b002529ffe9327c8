"""A gRPC client (Python's grpcio) calling grpc_server.py's methods through tern.

Usage: grpc_client.py calls|cancel TARGET [--ca CA_PEM]. With --ca the channel is TLS (ALPN
h2) and the certificate must name "localhost"; else plain h2c with prior knowledge.
- calls: unary calls, trailing metadata, status and message of an error, streaming each way
  and both ways, a 1 MiB message, the deadline seen by the server, a deadline that expires;
- cancel: starts a call without a deadline and cancels it (the server then prints
  "cancelled Hold": only the RST_STREAM passed on can tell it).
Prints "ok" and exits 0 when every check passed.
"""

import os
import queue
import sys
import time

import grpc


def channel(target, ca):
    if ca is None:
        return grpc.insecure_channel(target)
    with open(ca, "rb") as f:
        creds = grpc.ssl_channel_credentials(root_certificates=f.read())
    return grpc.secure_channel(
        target, creds, options=(("grpc.ssl_target_name_override", "localhost"),)
    )


def check(what, got, want):
    if got != want:
        print(f"FAIL {what}: got {got!r}, want {want!r}", flush=True)
        sys.exit(1)


def main():
    mode, target = sys.argv[1], sys.argv[2]
    ca = sys.argv[4] if len(sys.argv) == 5 and sys.argv[3] == "--ca" else None
    ch = channel(target, ca)
    grpc.channel_ready_future(ch).result(timeout=10)
    m = lambda kind, name: getattr(ch, kind)(f"/tern.Test/{name}")
    if mode == "cancel":
        cancel(m)
    else:
        calls(m)
    print("ok", flush=True)


def calls(m):
    reply, call = m("unary_unary", "Echo").with_call(b"hello", timeout=10)
    check("echo", reply, b"hello")
    check("trailer", dict(call.trailing_metadata()).get("x-trailer"), "done")
    check("status", call.code(), grpc.StatusCode.OK)

    big = os.urandom(1 << 20)
    check("1 MiB echo", m("unary_unary", "Echo")(big, timeout=20) == big, True)

    try:
        m("unary_unary", "Fail")(b"", timeout=10)
        check("error raised", False, True)
    except grpc.RpcError as e:
        check("error code", e.code(), grpc.StatusCode.NOT_FOUND)
        check("error message", e.details(), "no such thing")

    got = list(m("unary_stream", "Count")(b"100", timeout=10))
    check("server streaming", got, [str(i).encode() for i in range(100)])

    parts = iter([b"x" * 1000] * 300)
    check("client streaming", m("stream_unary", "Sum")(parts, timeout=10), b"300000")

    # Bidirectional, in lock step: each answer must arrive before the next message is sent,
    # so nothing may wait for the end of either stream.
    outgoing = queue.Queue()

    def messages():
        while True:
            item = outgoing.get(timeout=10)
            if item is None:
                return
            yield item

    answers = m("stream_stream", "Chat")(messages(), timeout=20)
    for i in range(20):
        outgoing.put(f"msg {i}".encode())
        check("chat answer", next(answers), f"msg {i}".encode())
    outgoing.put(None)
    check("chat end", list(answers), [])

    left = float(m("unary_unary", "Deadline")(b"", timeout=30))
    check(f"server sees the deadline ({left})", 20 < left <= 31, True)

    try:
        m("unary_unary", "Hold")(b"", timeout=1)
        check("deadline exceeded", False, True)
    except grpc.RpcError as e:
        check("deadline code", e.code(), grpc.StatusCode.DEADLINE_EXCEEDED)



def cancel(m):
    future = m("unary_unary", "Hold").future(b"")
    time.sleep(0.5)
    future.cancel()
    check("cancelled", future.cancelled(), True)


if __name__ == "__main__":
    main()
