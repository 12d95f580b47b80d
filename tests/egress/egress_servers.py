"""Servers for the tests of the runtimes' HTTP facility: a stand-in for the egress gateway (an
HTTP/1.1 forward proxy with the gateway's refusal and error answers) and two upstreams on
loopback, one plain HTTP and one HTTPS whose certificate a test CA made here signs.

    python3 egress_servers.py DIR

writes DIR/ca.pem (the test CA), then prints one JSON line
{"proxy": PORT, "http": PORT, "https": PORT, "ca": PATH} and serves until stdin closes.

The proxy's rules (the real gateway's are in the executor; only the shape of its answers
matters here):
- a CONNECT or request to refused.test answers 403 with X-Toolgate-Egress-Refused
  "refused.test is not in this version's egress list", to 10.0.0.5 "egress to 10.0.0.5 is
  blocked: private address";
- to broken.test 502 with X-Toolgate-Egress-Error "cannot connect to broken.test: connection
  refused"; to deadline.test 504 "the call's deadline passed", as at a call's deadline;
- anything else is forwarded to 127.0.0.1 at the port asked (CONNECT tunnels bytes both ways).
The upstreams answer:
- /echo: JSON {method, path, body, content_type, x_test, authorization} of the request;
- /redirect?to=URL: 302 to URL; /redirect-chain/N: N redirects in a row, then /echo;
- /status/N: status N with body "status N";
- /slow: nothing until the client goes away (or 60 s);
- /dribble: a 200 whose body never ends: one byte every 300 ms until the client goes away
  (or 60 s), so that no single wait of the client's lasts long.
"""

import http.server
import json
import os
import select
import socket
import socketserver
import ssl
import subprocess
import sys
import threading
import urllib.parse

from dribble import dribble

REFUSALS = {
    "refused.test": "refused.test is not in this version's egress list",
    "10.0.0.5": "egress to 10.0.0.5 is blocked: private address",
}
FAILURES = {"broken.test": "cannot connect to broken.test: connection refused"}
DEADLINES = {"deadline.test": "the call's deadline passed"}


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


class Upstream(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type="text/plain", extra=()):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self):
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        if url.path == "/echo":
            self.answer(200, json.dumps({
                "method": self.command, "path": self.path, "body": body,
                "content_type": self.headers.get("Content-Type"),
                "x_test": self.headers.get("X-Test"),
                "authorization": self.headers.get("Authorization")}),
                "application/json", [("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")])
        elif url.path == "/redirect":
            to = urllib.parse.parse_qs(url.query)["to"][0]
            self.answer(302, "", extra=[("Location", to)])
        elif url.path.startswith("/redirect-chain/"):
            n = int(url.path.rsplit("/", 1)[1])
            to = "/echo" if n <= 1 else "/redirect-chain/%d" % (n - 1)
            self.answer(302, "", extra=[("Location", to)])
        elif url.path.startswith("/status/"):
            n = int(url.path.rsplit("/", 1)[1])
            self.answer(n, "status %d" % n)
        elif url.path == "/slow":
            # Waits for the client to hang up: no sleep decides anything in a test.
            select.select([self.connection], [], [], 60)
        elif url.path == "/dribble":
            dribble(self)
        else:
            self.answer(404, "no such path")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_any


def pipe(a, b):
    """Copies bytes both ways between sockets a and b until either side closes."""
    try:
        while True:
            ready, _, _ = select.select([a, b], [], [])
            for src in ready:
                data = src.recv(65536)
                if not data:
                    return
                (b if src is a else a).sendall(data)
    except OSError:
        pass
    finally:
        a.close()
        b.close()


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def refuse(self, host):
        """Answers as the gateway does when host is refused or fails; True when it did."""
        if host in REFUSALS:
            status, header, message = 403, "X-Toolgate-Egress-Refused", REFUSALS[host]
        elif host in FAILURES:
            status, header, message = 502, "X-Toolgate-Egress-Error", FAILURES[host]
        elif host in DEADLINES:
            status, header, message = 504, "X-Toolgate-Egress-Error", DEADLINES[host]
        else:
            return False
        self.send_response(status)
        self.send_header(header, message)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        return True

    def do_CONNECT(self):
        host, _, port = self.path.rpartition(":")
        if self.refuse(host):
            return
        upstream = socket.create_connection(("127.0.0.1", int(port)))
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        pipe(self.connection, upstream)

    def forward(self):
        url = urllib.parse.urlsplit(self.path)
        if not url.scheme:
            self.send_response(400)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.refuse(url.hostname):
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        upstream = socket.create_connection(("127.0.0.1", url.port or 80))
        target = url.path + ("?" + url.query if url.query else "")
        head = "%s %s HTTP/1.1\r\n" % (self.command, target)
        for name, value in self.headers.items():
            if name.lower() not in ("connection", "proxy-connection", "keep-alive"):
                head += "%s: %s\r\n" % (name, value)
        head += "Connection: close\r\n\r\n"
        upstream.sendall(head.encode() + body)
        self.close_connection = True
        # One request per connection: the answer runs until the upstream closes.
        try:
            while True:
                data = upstream.recv(65536)
                if not data:
                    break
                self.connection.sendall(data)
        finally:
            upstream.close()

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = forward


def make_certificates(directory):
    """A test CA and a server certificate for 127.0.0.1 and localhost signed by it."""
    ca_key, ca = os.path.join(directory, "ca.key"), os.path.join(directory, "ca.pem")
    key, csr = os.path.join(directory, "server.key"), os.path.join(directory, "server.csr")
    cert, ext = os.path.join(directory, "server.pem"), os.path.join(directory, "server.ext")
    run = lambda *args: subprocess.run(args, check=True, capture_output=True)  # noqa: E731
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca,
        "-days", "2", "-subj", "/CN=Toolgate test CA")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
        "-subj", "/CN=127.0.0.1")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
        "-out", cert, "-days", "2", "-extfile", ext)
    return ca, cert, key


def serve(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def main():
    directory = sys.argv[1]
    ca, cert, key = make_certificates(directory)
    plain = Server(("127.0.0.1", 0), Upstream)
    secure = Server(("127.0.0.1", 0), Upstream)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    secure.socket = context.wrap_socket(secure.socket, server_side=True)
    proxy = Server(("127.0.0.1", 0), Proxy)
    ports = {"http": serve(plain), "https": serve(secure), "proxy": serve(proxy), "ca": ca}
    print(json.dumps(ports), flush=True)
    sys.stdin.read()  # until the test closes our stdin (or dies)


if __name__ == "__main__":
    main()
