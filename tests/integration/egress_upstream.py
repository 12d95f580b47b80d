#!/usr/bin/env python3
"""An outside host for the egress integration test: HTTP and HTTPS on one address.

The test runs it inside a network namespace of its own, reached over a veth pair, so that the
sandboxes' traffic goes through the egress gateway to a host that is not the machine's loopback.

  /hello               200 "hello from upstream"
  /redirect?to=URL     302 to URL (the handler's client follows it, through the gateway again)
  /slow?s=N            answers after N seconds
  /dribble             a 200 whose body never ends: a byte every 300 ms until the client goes
                       away (or 60 s), so that no single wait of the client's lasts long
  /record?id=ID        any method: notes that a request for ID arrived, answers 200
  /recorded?id=ID      "yes" when a request for ID arrived, else "no"
Once both ports listen, it writes "ready" to --ready-file (renamed into place).
"""
import argparse
import http.server
import os
import ssl
import sys
import threading
import time
import urllib.parse

# The slow answer is shared with the executor's egress test servers.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "egress"))
from dribble import dribble  # noqa: E402


RECORDED = set()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        if url.path == "/hello":
            self.answer(200, b"hello from upstream")
        elif url.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", query["to"][0])
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif url.path == "/slow":
            time.sleep(float(query.get("s", ["30"])[0]))
            self.answer(200, b"late")
        elif url.path == "/dribble":
            dribble(self)
        elif url.path == "/record":
            RECORDED.add(query["id"][0])
            self.answer(200, b"recorded")
        elif url.path == "/recorded":
            self.answer(200, b"yes" if query["id"][0] in RECORDED else b"no")
        else:
            self.answer(404, b"no such path")

    do_POST = do_GET

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--http-port", type=int, required=True)
    parser.add_argument("--https-port", type=int, required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--ready-file", required=True)
    args = parser.parse_args()

    plain = http.server.ThreadingHTTPServer((args.address, args.http_port), Handler)
    tls = http.server.ThreadingHTTPServer((args.address, args.https_port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    tls.socket = context.wrap_socket(tls.socket, server_side=True)
    for server in (plain, tls):
        threading.Thread(target=server.serve_forever, daemon=True).start()

    with open(args.ready_file + ".tmp", "w") as ready:
        ready.write("ready\n")
    os.rename(args.ready_file + ".tmp", args.ready_file)
    threading.Event().wait()


if __name__ == "__main__":
    main()
