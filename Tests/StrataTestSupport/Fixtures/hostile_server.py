#!/usr/bin/env python3
"""A loopback HTTP server that misbehaves, for Strata's network robustness tests.

Listens on 127.0.0.1 (port 0 = any free port), prints the port on its first
line of stdout, then serves:
  /endless               200 without a length, bytes as fast as the client reads, forever
  /huge/N                200, Content-Length N, N bytes
  /unannounced/MS/N      200 without a length (ends at the close), 64 KiB every MS milliseconds, N times
  /chunked/MS/N          200 chunked, a 64 KiB chunk every MS milliseconds, N chunks
  /hang                  reads the request, never answers
  /trickle/MS/N          200, Content-Length N, one byte every MS milliseconds
  /cut/N/SENT            200, Content-Length N, SENT bytes, then closes
  /overlong              200, Content-Length 3, then 10 bytes
  /redirect-loop         302 to itself, forever
  /status/CODE           that status, body "status CODE" (none for 204 and 304)
  /binary                200, 256 bytes 0x00-0xFF (not UTF-8)
"""
import socket
import sys
import threading
import time


def handle(conn):
    try:
        conn.settimeout(60)
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = conn.recv(4096)
            if not chunk:
                return
            request += chunk
        path = request.split(b" ")[1].decode()
        parts = path.strip("/").split("/")

        def head(status, length=None, extra=""):
            text = "HTTP/1.1 %s\r\n" % status
            if length is not None:
                text += "Content-Length: %d\r\n" % length
            text += extra + "Connection: close\r\n\r\n"
            conn.sendall(text.encode())

        if parts[0] == "endless":
            head("200 OK")
            block = b"x" * 65536
            while True:
                conn.sendall(block)
        elif parts[0] == "huge":
            size = int(parts[1])
            head("200 OK", size)
            block = b"x" * 65536
            while size > 0:
                conn.sendall(block[:size])
                size -= min(size, len(block))
        elif parts[0] == "unannounced":
            # No Content-Length: a body delimited by the close, sent in
            # 64 KiB blocks every `interval` ms, `count` blocks in all.
            interval, count = int(parts[1]) / 1000.0, int(parts[2])
            head("200 OK")
            block = b"u" * 65536
            for _ in range(count):
                conn.sendall(block)
                time.sleep(interval)
        elif parts[0] == "chunked":
            # No Content-Length: a chunked body, one 64 KiB chunk every
            # `interval` ms, `count` chunks in all, then the last chunk.
            interval, count = int(parts[1]) / 1000.0, int(parts[2])
            head("200 OK", extra="Transfer-Encoding: chunked\r\n")
            block = b"k" * 65536
            for _ in range(count):
                conn.sendall(b"%x\r\n" % len(block) + block + b"\r\n")
                time.sleep(interval)
            conn.sendall(b"0\r\n\r\n")
        elif parts[0] == "hang":
            time.sleep(3600)
        elif parts[0] == "trickle":
            interval, size = int(parts[1]) / 1000.0, int(parts[2])
            head("200 OK", size)
            for _ in range(size):
                conn.sendall(b"t")
                time.sleep(interval)
        elif parts[0] == "cut":
            head("200 OK", int(parts[1]))
            conn.sendall(b"c" * int(parts[2]))
        elif parts[0] == "overlong":
            head("200 OK", 3)
            conn.sendall(b"abcdefghij")
        elif parts[0] == "redirect-loop":
            head("302 Found", 0, "Location: /redirect-loop\r\n")
        elif parts[0] == "status":
            code = int(parts[1])
            if code in (204, 304):
                head("%d X" % code)
            else:
                body = ("status %d" % code).encode()
                head("%d X" % code, len(body))
                conn.sendall(body)
        elif parts[0] == "binary":
            body = bytes(range(256))
            head("200 OK", len(body))
            conn.sendall(body)
        else:
            head("404 Not Found", 0)
    except OSError:
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0))
listener.listen(64)
print(listener.getsockname()[1], flush=True)
while True:
    connection, _ = listener.accept()
    threading.Thread(target=handle, args=(connection,), daemon=True).start()
