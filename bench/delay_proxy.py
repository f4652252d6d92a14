#!/usr/bin/env python3
"""bench/delay_proxy.py — a TCP proxy on loopback that adds a fixed delay
to every byte in each direction, so a connection through it sees an RTT of
twice the delay (where tc netem is not available: remote_read.sh).

Bytes are forwarded in the order they came, each chunk DELAY ms after it
was read, without waiting for the previous chunk's delay to end: the
delay is latency, not a rate limit (the pipe stays full, as on a long fat
link).

    delay_proxy.py LISTEN_PORTFILE TARGET_PORT DELAY_MS LIFETIME_S
"""
import asyncio
import sys
import time

PORTFILE, TARGET, DELAY, LIFETIME = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000, float(sys.argv[4])


async def pump(reader, writer):
    q = asyncio.Queue()

    async def send():
        while True:
            due, data = await q.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    task = asyncio.ensure_future(send())
    try:
        while True:
            data = await reader.read(1 << 18)
            if not data:
                break
            q.put_nowait((time.monotonic() + DELAY, data))
    except ConnectionError:
        pass
    q.put_nowait((time.monotonic() + DELAY, None))
    try:
        await task
    except ConnectionError:
        pass


async def handle(cr, cw):
    try:
        sr, sw = await asyncio.open_connection("127.0.0.1", TARGET)
    except OSError:
        cw.close()
        return
    await asyncio.gather(pump(cr, sw), pump(sr, cw), return_exceptions=True)


async def main():
    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    with open(PORTFILE + ".tmp", "w") as f:
        f.write("%d\n" % port)
    import os
    os.rename(PORTFILE + ".tmp", PORTFILE)
    await asyncio.sleep(LIFETIME)


asyncio.run(main())
