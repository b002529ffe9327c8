"""A WebSocket echo server for the tunnel tests, built on Python's `websockets` (not tern's code).

Usage: ws_echo_server.py
Listens on 127.0.0.1, an ephemeral port, and prints "port N" once it accepts connections.
Each connection echoes every message, text or binary, as it came. The text message
"close-4001" makes the server close the connection with code 4001 and reason "server says bye".
When a connection ends, the server prints "closed CODE REASON": the close code and reason the
client sent (or "closed 4001 ..." for the server's own close, as the client echoed it back).
Pings are answered by the library (pong) without reaching this code.
"""

import asyncio
import sys

from websockets.asyncio.server import serve

# The tests send a 4 MiB message; the library's default limit is 1 MiB.
MAX_SIZE = 16 * 1024 * 1024


async def echo(ws):
    async for message in ws:
        if message == "close-4001":
            await ws.close(4001, "server says bye")
            break
        await ws.send(message)
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
