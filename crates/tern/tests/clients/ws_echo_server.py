"""A WebSocket echo server for the tunnel tests, built on Python's `websockets` (not tern's code).

Usage: ws_echo_server.py
Listens on 127.0.0.1, an ephemeral port, and prints "port N" once it accepts connections.
Each connection echoes every message, text or binary, as it came. The text message
"close-4001" makes the server close the connection with code 4001 and reason "server says bye";
the text message "abort" makes it reset its TCP connection (RST, no close frame).
When a connection ends, the server prints "closed CODE REASON": the close code and reason the
client sent (or "closed 4001 ..." for the server's own close, as the client echoed it back;
"closed 1006 " when the connection ended without a close frame, as after a reset).
Pings are answered by the library (pong) without reaching this code.
"""

import asyncio
import socket
import struct
import sys

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

# The tests send a 4 MiB message; the library's default limit is 1 MiB.
MAX_SIZE = 16 * 1024 * 1024


def reset(ws):
    """Closes the TCP connection with a reset (SO_LINGER 0)."""
    sock = ws.transport.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    ws.transport.abort()


async def echo(ws):
    try:
        async for message in ws:
            if message == "close-4001":
                await ws.close(4001, "server says bye")
                break
            if message == "abort":
                reset(ws)
                break
            await ws.send(message)
    except ConnectionClosed:
        pass
    await ws.wait_closed()
    print("closed %s %s" % (ws.close_code, ws.close_reason), flush=True)


async def main():
    async with serve(echo, "127.0.0.1", 0, max_size=MAX_SIZE) as server:
        port = server.sockets[0].getsockname()[1]
        print("port %d" % port, flush=True)
        await asyncio.Future()


try:
    asyncio.run(main())
except KeyboardInterrupt:
    sys.exit(0)
