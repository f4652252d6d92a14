#!/usr/bin/env python3
"""tests/remote/faultserver.py — an HTTP server that misbehaves on purpose.

Serves the files of ROOT on 127.0.0.1:PORT with Range, ETag and If-Match
like a store does, except under these path prefixes (the rest of the path
names the file):

  /ok/F          plain
  /drop/F        first GET: headers and half the body, then the connection is cut
  /503once/F     first GET: 503, then plain
  /503always/F   503 forever
  /429/F         first GET: 429 with Retry-After: 1, then plain
  /short/F       first GET: Content-Length as asked, a shorter body, then close
  /short3/F      every GET: a shorter body (never succeeds)
  /etag/F        the ETag changes after the second GET (the object "changed");
                 If-Match is ignored, as by a server that does not support it,
                 so only the client's own ETag comparison can catch it
  /lastmod/F     no ETag, only Last-Modified, which changes after the second
                 GET; If-Unmodified-Since is ignored (the client must compare)
  /stall/F       headers and 100 bytes (never the last one), then silence
                 (until the lifetime ends)
  /stallfar/F    ranges starting at byte 300000 or later stall like /stall/
  /redir/F       302 to http://localhost:PORT/ok/F (another host name)
  /503on-S/F     503 forever when F contains S, plain otherwise (one part of
                 a set that never answers)
  /fail3on-S/F   when F contains S, its first 3 GETs answer 503, then plain
                 (a part whose server is down for a while, then back)
  /etagon-S/F    like /etag/ but only for the files whose name contains S:
                 one object of the set changed, the others stay as they were

The file is the path's last segment, so /ok/BUCKET/KEY works as an S3
path-style endpoint http://127.0.0.1:PORT/ok (nothing is verified there).
Every request is logged to LOG as "METHOD PATH RANGE STATUS SIGNED TOKEN
IUS", SIGNED the SignedHeaders of a SigV4 Authorization header (or -),
TOKEN "token" when x-amz-security-token was sent (its value is not
logged), IUS the If-Unmodified-Since header with spaces as '_' (or -).  The server
exits by itself after LIFETIME seconds (bounded even if the test dies).

  faultserver.py ROOT PORTFILE LOG LIFETIME
"""
import hashlib
import os
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT, PORTFILE, LOG, LIFETIME = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
counts = {}
lock = threading.Lock()
stop = threading.Event()


files = {}


def load(path):
    """(data, etag) of a file, read and hashed once per version"""
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size)
    with lock:
        if key not in files:
            data = open(path, "rb").read()
            files[key] = (data, '"%s"' % hashlib.sha256(data).hexdigest()[:16])
        return files[key]


def bump(key):
    with lock:
        counts[key] = counts.get(key, 0) + 1
        return counts[key]


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The headers and the body are two writes: with Nagle's algorithm the
    # body waits for the client's delayed ACK of the headers, 40 ms a
    # response on loopback (22 s for one pass over a 216-file tree).
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def log(self, status):
        with lock, open(LOG, "a") as f:
            auth = self.headers.get("Authorization", "")
            signed = auth.split("SignedHeaders=")[1].split(",")[0] if "SignedHeaders=" in auth else "-"
            tok = "token" if self.headers.get("x-amz-security-token") else "-"
            ius = self.headers.get("If-Unmodified-Since", "-").replace(" ", "_")
            f.write("%s %s %s %d %s %s %s\n" % (self.command, self.path, self.headers.get("Range", "-"),
                                                status, signed, tok, ius))

    def plain_status(self, status, extra=()):
        self.send_response(status)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.log(status)

    def do_HEAD(self):
        self.handle_get(head=True)

    def do_GET(self):
        self.handle_get(head=False)

    def handle_get(self, head):
        parts = self.path.split("/")
        if len(parts) < 3:
            return self.plain_status(404)
        mode, name = parts[1], parts[-1]
        path = os.path.join(ROOT, name)
        if "/" in name or not os.path.isfile(path):
            return self.plain_status(404)
        data, etag = load(path)
        n = bump(mode + "/" + name) if not head else 0
        if (mode == "etag" or (mode.startswith("etagon-") and mode[7:] in name)) and n > 2:
            etag = '"changed-%d"' % n
        if mode == "redir":
            port = self.server.server_address[1]
            return self.plain_status(302, [("Location", "http://localhost:%d/ok/%s" % (port, name))])
        if mode.startswith("503on-") and mode[6:] in name:
            return self.plain_status(503)
        if mode.startswith("fail3on-") and mode[8:] in name and n <= 3:
            return self.plain_status(503)
        if mode == "503always" or (mode == "503once" and n == 1):
            return self.plain_status(503)
        if mode == "429" and n == 1:
            return self.plain_status(429, [("Retry-After", "1")])
        im = self.headers.get("If-Match")
        if im is not None and im != etag and mode != "etag" and not mode.startswith("etagon-"):
            return self.plain_status(412)
        first, last = 0, len(data) - 1
        rng = self.headers.get("Range")
        status = 200
        if rng and rng.startswith("bytes="):
            a, b = rng[6:].split("-")
            first, last = int(a), min(int(b), len(data) - 1) if b else len(data) - 1
            if first >= len(data):
                return self.plain_status(416, [("Content-Range", "bytes */%d" % len(data))])
            status = 206
        body = memoryview(data)[first:last + 1]
        self.send_response(status)
        if mode == "lastmod":
            day = 1 if n <= 2 else 2
            self.send_header("Last-Modified", "Mon, 0%d Jun 2026 10:00:00 GMT" % day)
        else:
            self.send_header("ETag", etag)
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, len(data)))
        self.send_header("Content-Length", str(len(body)))
        if mode in ("short", "short3", "drop"):
            self.send_header("Connection", "close")
        self.end_headers()
        self.log(status)
        if head:
            return
        if (mode in ("drop", "short") and n == 1) or mode == "short3":
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if mode == "stall" or (mode == "stallfar" and first >= 300000):
            # never the whole body: a retry that resumes must stall as well
            self.wfile.write(body[:min(100, len(body) - 1)])
            self.wfile.flush()
            stop.wait(LIFETIME)
            self.close_connection = True
            return
        self.wfile.write(body)


class S(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver listens with a backlog of 5: a read over a dozen parts
    # opens a dozen connections at once, the SYNs past the backlog are
    # dropped, and the kernel resends them after 1 s
    request_queue_size = 128


def main():
    srv = S(("127.0.0.1", 0), H)
    with open(PORTFILE + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(PORTFILE + ".tmp", PORTFILE)
    t = threading.Timer(LIFETIME, lambda: (stop.set(), srv.shutdown()))
    t.daemon = True
    t.start()
    srv.serve_forever(poll_interval=0.1)


main()
