"""A WebSocket client for the tunnel tests, built on Python's `websockets` (not tern's code).

Usage: ws_client.py URL [CA_FILE]
URL is ws://HOST:PORT/PATH or wss://...; with wss, CA_FILE (a PEM certificate) is the CA the
server's certificate must chain to, for the name "localhost"; without it, verification is off.
Runs the scenario against an echo server (ws_echo_server.py), prints one line per step, and
exits non-zero at the first step that fails:
- echo of a text and of a binary message;
- echo of a 4 MiB binary message;
- a ping answered by a pong;
- a close with code 1000 and reason "client done" (the server prints what it saw);
- on a second connection, the server's close with 4001 "server says bye", seen by the client.
"""

import asyncio
import os
import ssl
import sys

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

MAX_SIZE = 16 * 1024 * 1024


def tls_context(url, ca):
    if not url.startswith("wss://"):
        return None
    ctx = ssl.create_default_context()
    if ca:
        ctx.load_verify_locations(ca)
    else:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


def check(step, ok):
    if not ok:
        raise SystemExit("FAILED: " + step)
    print("ok " + step, flush=True)


async def scenario(url, ctx, name):
    async with connect(url, ssl=ctx, server_hostname=name, max_size=MAX_SIZE) as ws:
        await ws.send("hello")
        check("text echo", await ws.recv() == "hello")
        await ws.send(b"\x00\x01\xfe\xff")
        check("binary echo", await ws.recv() == b"\x00\x01\xfe\xff")
        big = os.urandom(4 * 1024 * 1024)
        await ws.send(big)
        check("4 MiB echo", await ws.recv() == big)
        pong = await ws.ping(b"are you there")
        latency = await asyncio.wait_for(pong, 10)
        check("ping pong", latency >= 0)
        await ws.close(1000, "client done")
        check("client close", ws.close_code == 1000)
    async with connect(url, ssl=ctx, server_hostname=name, max_size=MAX_SIZE) as ws:
        await ws.send("close-4001")
        try:
            await asyncio.wait_for(ws.recv(), 10)
            check("server close", False)
        except ConnectionClosed as closed:
            got = closed.rcvd
            check(
                "server close 4001",
                got is not None and got.code == 4001 and got.reason == "server says bye",
            )


def main():
    url = sys.argv[1]
    ca = sys.argv[2] if len(sys.argv) > 2 else None
    ctx = tls_context(url, ca)
    name = "localhost" if ctx is not None and ca else None
    asyncio.run(asyncio.wait_for(scenario(url, ctx, name), 60))


main()
