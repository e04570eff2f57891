#!/usr/bin/env python3
"""A loopback HTTP origin for Strata's network tests.

Listens on 127.0.0.1 (port 0 = any free port), prints the port on its first
line of stdout, then serves:
  /value/NAME            200, body "value:NAME"
  /status/CODE           that status, body "status CODE"
  /slow/MS/NAME          waits MS milliseconds, then 200 "value:NAME"
  /echo-header           200, body = the X-Strata-Test request header
  /file/NAME             200, the bytes of Fixtures/NAME
  /stats                 JSON: requests per path, and writes aborted by clients
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
counts = {}
aborted = [0]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, body):
        data = body.encode()
        try:
            self.send_response(code)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            with lock:
                aborted[0] += 1

    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if parts[0] != "stats":
            with lock:
                counts[self.path] = counts.get(self.path, 0) + 1
        if parts[0] == "value" and len(parts) == 2:
            self.send(200, "value:" + parts[1])
        elif parts[0] == "status" and len(parts) == 2:
            self.send(int(parts[1]), "status " + parts[1])
        elif parts[0] == "slow" and len(parts) == 3:
            deadline = time.time() + int(parts[1]) / 1000.0
            while time.time() < deadline:
                time.sleep(0.01)
            self.send(200, "value:" + parts[2])
        elif parts[0] == "file" and len(parts) == 2 and "/" not in parts[1]:
            path = os.path.join(os.path.dirname(os.path.abspath(__file__)), parts[1])
            if os.path.isfile(path):
                with open(path, "rb") as handle:
                    data = handle.read()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            else:
                self.send(404, "no such file")
        elif parts[0] == "echo-header":
            self.send(200, self.headers.get("X-Strata-Test", ""))
        elif parts[0] == "stats":
            with lock:
                body = json.dumps({"counts": counts, "aborted": aborted[0]})
            self.send(200, body)
        else:
            self.send(404, "no such path")


server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
