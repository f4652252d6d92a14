#!/usr/bin/env python3
"""bench/delay_proxy.py — a TCP proxy on loopback that adds a fixed delay
to every byte in each direction, so a connection through it sees an RTT of
twice the delay (where tc netem is not available: remote_read.sh).

Bytes are forwarded in the order they came, each chunk DELAY ms after it
was read, without waiting for the previous chunk's delay to end: the
delay is latency, not a rate limit (the pipe stays full, as on a long fat
link).

Each connection runs in a process of its own (forked at accept, killed
with the proxy: PR_SET_PDEATHSIG), each of its directions on two threads
(one reads and stamps the chunks, one sends them when due).  An earlier asyncio version
ran every connection on one Python thread, whose CPU then bounded the
total: two parallel ranged curls through it got no more than one (about
400-600 MiB/s together on the bench machine), so the mount's parallel
connections measured the proxy, not the mount (bench/README.md, issue 14).
Now connections run on as many cores as there are.  A direction
holds at most QUEUE_MAX chunks in flight (back-pressure on its reader).

    delay_proxy.py LISTEN_PORTFILE TARGET_PORT DELAY_MS LIFETIME_S
"""
import ctypes
import os
import queue
import signal
import socket
import sys
import threading
import time

PORTFILE, TARGET, DELAY, LIFETIME = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000, float(sys.argv[4])
CHUNK = 1 << 18
QUEUE_MAX = 256   # chunks of CHUNK bytes in flight per direction: 64 MiB
PR_SET_PDEATHSIG = 1
libc = ctypes.CDLL(None, use_errno=True)


def pump(src, dst):
    """src -> dst, each chunk DELAY after it was read; then half-close dst."""
    q = queue.Queue(QUEUE_MAX)

    def send():
        while True:
            due, data = q.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            try:
                dst.sendall(data)
            except OSError:
                try:
                    src.shutdown(socket.SHUT_RD)   # stops the reader below
                except OSError:
                    pass
                break
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        while True:
            data = src.recv(CHUNK)
            if not data:
                break
            q.put((time.monotonic() + DELAY, data))
    except OSError:
        pass
    q.put((time.monotonic() + DELAY, None))
    sender.join()


def handle(client):
    try:
        server = socket.create_connection(("127.0.0.1", TARGET))
    except OSError:
        client.close()
        return
    for s in (client, server):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    up = threading.Thread(target=pump, args=(client, server), daemon=True)
    up.start()
    pump(server, client)
    up.join()
    client.close()
    server.close()


def main():
    parent = os.getpid()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # children reaped by the kernel
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    srv.settimeout(0.2)
    with open(PORTFILE + ".tmp", "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    os.rename(PORTFILE + ".tmp", PORTFILE)
    end = time.monotonic() + LIFETIME
    while time.monotonic() < end:
        try:
            client, _ = srv.accept()
        except socket.timeout:
            continue
        client.settimeout(None)
        if os.fork() == 0:
            # the connection in a process of its own: no GIL shared with
            # the others; it dies with the proxy (killed by PID)
            srv.close()
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:
                os._exit(0)
            handle(client)
            os._exit(0)
        client.close()


main()
