"""What the platform gives a Python handler: `import toolgate`.

fetch() is the runtime's outbound HTTP facility (handlers call it as context.fetch). A sandbox
has no route out; its only way out is the egress gateway, a forward proxy the executor names in
the environment (TOOLGATE_EGRESS_PROXY, and HTTP_PROXY/HTTPS_PROXY for the standard library).
https goes through a CONNECT tunnel, TLS end to end, the certificate checked here against the
bundle SSL_CERT_FILE names (or the system's); http goes in absolute form. Redirects are followed,
at most MAX_REDIRECTS, each hop through the gateway again, so each hop is checked. The gateway's
refusal (403 with X-Toolgate-Egress-Refused) and its own failures (502 or 504 with
X-Toolgate-Egress-Error), also when they answer the CONNECT, raise EgressError whose message is
exactly the gateway's. Any other status is a response.

The rules are those of services/executor/include/toolgate/executor/egress_fetch.h, which the Lua
worker runs; keep the three runtimes in step.
"""

import json as _json
import os
import threading
import time

MAX_REDIRECTS = 5
PROXY_ENV = "TOOLGATE_EGRESS_PROXY"
NO_EGRESS = "egress is not available in this sandbox"
REFUSED_HEADER = "x-toolgate-egress-refused"
GATEWAY_ERROR_HEADER = "x-toolgate-egress-error"
DEFAULT_TIMEOUT_MS = 30000
CREDENTIAL_HEADERS = ("authorization", "cookie", "proxy-authorization")

# Read once, at start: the sandbox's own environment, before any handler can change it.
_PROXY = os.environ.get(PROXY_ENV, "")
_CA_FILE = os.environ.get("SSL_CERT_FILE", "")


class EgressError(Exception):
    """An outbound request failed: the egress gateway refused it (the message names the rule),
    the gateway or the upstream failed, the TLS certificate did not verify, or it timed out."""

    timed_out = False  # the request ran out of time (its own, or the call's at the gateway: 504)


def _timeout_error(message):
    error = EgressError(message)
    error.timed_out = True
    return error


class Response:
    """A response of any status: status (int), headers (dict, names in lower case; repeated
    headers joined with ", "), text() and json() over the body (bytes in .body)."""

    def __init__(self, status, headers, body, url):
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url  # the final URL, after redirects

    def text(self, encoding=None):
        if encoding is None:
            encoding = "utf-8"
            for part in self.headers.get("content-type", "").split(";")[1:]:
                name, _, value = part.strip().partition("=")
                if name.lower() == "charset" and value:
                    encoding = value.strip('"')
        return self.body.decode(encoding, "replace")

    def json(self):
        return _json.loads(self.text())

    def __repr__(self):
        return "<Response %d>" % self.status


def _gateway_error(status, headers):
    """The EgressError the gateway's answer means, or None when status and headers (lower-case
    names) are not its word. Its 504 says the call's deadline passed."""
    if status == 403 and REFUSED_HEADER in headers:
        return EgressError(headers[REFUSED_HEADER])
    if status == 502 and GATEWAY_ERROR_HEADER in headers:
        return EgressError(headers[GATEWAY_ERROR_HEADER])
    if status == 504 and GATEWAY_ERROR_HEADER in headers:
        return _timeout_error(headers[GATEWAY_ERROR_HEADER])
    return None


def _lower_headers(message):
    headers = {}
    for name, value in message.items():
        name = name.lower()
        headers[name] = headers[name] + ", " + value if name in headers else value
    return headers


_opener = None

# The time.monotonic() by which the request this thread is sending must be over (its "at"),
# redirects included: fetch sets it, the sockets to the gateway read it before each wait.
_request_deadline = threading.local()


def _time_left():
    """The seconds left to the request this thread is sending, for the next wait on its socket;
    raises socket.timeout once none are left. None (no limit) outside fetch."""
    import socket

    at = getattr(_request_deadline, "at", None)
    if at is None:
        return None
    left = at - time.monotonic()
    if left <= 0:
        raise socket.timeout("timed out")
    return left


class _Deadline:
    """Gives a socket's every wait only what is left of the request's time (_time_left), so that
    timeout_ms bounds the whole request. A socket timeout alone bounds each wait: an upstream
    sending a byte now and then would hold the request as long as it liked."""

    def recv(self, *args):
        self.settimeout(_time_left())
        return super().recv(*args)

    def recv_into(self, *args):
        self.settimeout(_time_left())
        return super().recv_into(*args)

    def send(self, *args):
        self.settimeout(_time_left())
        return super().send(*args)

    def sendall(self, *args):
        self.settimeout(_time_left())
        return super().sendall(*args)


def _build_opener():
    """An opener that can only reach the gateway: http through it in absolute form, https
    through a CONNECT tunnel of our own (http.client's tunnel drops the headers of a refused
    CONNECT, which carry the gateway's message), redirects followed at most MAX_REDIRECTS times,
    and no file:, ftp: or data: handler. Its sockets wait only for the time the request has
    left (_Deadline)."""
    import http.client
    import socket
    import ssl
    import urllib.request

    host, _, port = _PROXY.rpartition(":")
    proxy_address = (host, int(port))

    class DeadlineSocket(_Deadline, socket.socket):
        pass

    class DeadlineSSLSocket(_Deadline, ssl.SSLSocket):
        pass

    context = ssl.create_default_context(cafile=_CA_FILE or None)
    context.sslsocket_class = DeadlineSSLSocket

    def connect_to_gateway():
        sock = socket.create_connection(proxy_address, _time_left())
        sock = DeadlineSocket(sock.family, sock.type, sock.proto, fileno=sock.detach())
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    class GatewayConnection(http.client.HTTPConnection):
        def connect(self):
            self.sock = connect_to_gateway()

    class GatewayHandler(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(GatewayConnection, req)

    class TunnelConnection(http.client.HTTPSConnection):
        def connect(self):
            sock = connect_to_gateway()
            try:
                target = "%s:%d" % (self.host, self.port)
                sock.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target))
                             .encode("idna"))
                answer = http.client.HTTPResponse(sock, method="CONNECT")
                answer.begin()
                if answer.status != 200:
                    error = _gateway_error(answer.status, _lower_headers(answer.headers))
                    raise error or EgressError("the egress gateway answered CONNECT %s with %d"
                                               % (target, answer.status))
                sock.settimeout(_time_left())  # the handshake's, which wrap_socket runs
                self.sock = context.wrap_socket(sock, server_hostname=self.host)
            except BaseException:
                sock.close()
                raise

    class TunnelHandler(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(TunnelConnection, req, context=context)

    class Redirects(urllib.request.HTTPRedirectHandler):
        max_redirections = MAX_REDIRECTS

        def redirect_request(self, req, fp, code, msg, headers, newurl):
            new = super().redirect_request(req, fp, code, msg, headers, newurl)
            # Credentials meant for one host do not follow a redirect to another.
            if new is not None and new.host != req.host:
                for name in list(new.headers):
                    if name.lower() in CREDENTIAL_HEADERS:
                        del new.headers[name]
            return new

    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.ProxyHandler({"http": "http://" + _PROXY}),
                    urllib.request.UnknownHandler(), GatewayHandler(),
                    TunnelHandler(), urllib.request.HTTPDefaultErrorHandler(), Redirects(),
                    urllib.request.HTTPErrorProcessor()):
        opener.add_handler(handler)
    return opener


# How close to the call's deadline a failed request counts as cut by it: the worker knows the
# deadline only to within the time its call took to arrive.
DEADLINE_SLACK_S = 0.050


def _wait_for_the_end():
    """The call's deadline has come: the executor is stopping this process. Waiting for it,
    rather than raising, keeps the outcome what the deadline makes it (408, not charged)
    whichever of the gateway's 504, the socket's timeout or the executor's stop comes first."""
    while True:
        time.sleep(60)


def fetch(url, method="GET", headers=None, body=None, timeout_ms=None, deadline=None):
    """Sends one request through the egress gateway and returns its final Response (any status).

    body: str (sent as UTF-8), bytes, or a dict or list (sent as JSON, with content-type
    application/json unless headers name one). timeout_ms bounds the whole request: connecting,
    sending, reading the whole answer and every redirect's hop, together. deadline
    (time.monotonic()) is the call's, which it never passes: a request still running when the
    call's deadline comes ends with the call (this process is stopped). Raises EgressError on a
    refusal, a network, TLS or gateway failure, a timeout or too many redirects; ValueError for a
    URL that is not http(s) or a bad argument."""
    import urllib.parse
    import urllib.request

    global _opener
    if not _PROXY:
        raise EgressError(NO_EGRESS)
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        raise ValueError("fetch: not an absolute http:// or https:// URL")
    headers = dict(headers or {})
    if isinstance(body, (dict, list)):
        body = _json.dumps(body).encode()
        if not any(name.lower() == "content-type" for name in headers):
            headers["Content-Type"] = "application/json"
    elif isinstance(body, str):
        body = body.encode()
    elif body is not None and not isinstance(body, (bytes, bytearray)):
        raise ValueError("fetch: body must be str, bytes, dict or list")
    timeout = (timeout_ms if timeout_ms is not None else DEFAULT_TIMEOUT_MS) / 1000.0
    # Whether the call's deadline, not the handler's timeout_ms, is what limits the request.
    capped = deadline is not None and deadline - time.monotonic() <= timeout
    if deadline is not None:
        timeout = min(timeout, deadline - time.monotonic())
    if timeout <= 0:
        raise EgressError("the call has no time left for a request")
    if _opener is None:
        _opener = _build_opener()
    request = urllib.request.Request(url, data=body, headers=headers, method=method.upper())
    _request_deadline.at = time.monotonic() + timeout
    try:
        return _send(request, timeout)
    except EgressError as e:
        # Cut by the call's deadline: the call is over, whatever reported it first.
        if deadline is not None and ((e.timed_out and capped) or
                                     time.monotonic() >= deadline - DEADLINE_SLACK_S):
            _wait_for_the_end()
        raise
    finally:
        _request_deadline.at = None


def _send(request, timeout):
    """Opens request through the gateway and reads its whole answer; see fetch."""
    import socket
    import ssl
    import urllib.error
    import urllib.parse

    host = urllib.parse.urlsplit(request.full_url).hostname or ""
    try:
        try:
            answer = _opener.open(request, timeout=timeout)
        except urllib.error.HTTPError as e:
            if _too_many_redirects(e):
                raise EgressError("the request to %s was redirected more than %d times"
                                  % (host, MAX_REDIRECTS)) from None
            answer = e  # a status like any other: an HTTPError is a response too
        with answer:
            status = answer.status if answer.status is not None else answer.code
            response_headers = _lower_headers(answer.headers)
            error = _gateway_error(status, response_headers)
            if error is not None:
                raise error
            return Response(status, response_headers, answer.read(), answer.geturl())
    except EgressError:
        raise
    except (socket.timeout, TimeoutError):
        raise _timeout_error("the request to %s took longer than %d ms"
                             % (host, timeout * 1000)) from None
    except ssl.SSLError as e:
        raise EgressError("TLS: %s" % (getattr(e, "verify_message", None) or e.reason or e))\
            from None
    except urllib.error.URLError as e:
        reason = e.reason
        if isinstance(reason, EgressError):
            raise reason from None
        if isinstance(reason, (socket.timeout, TimeoutError)):
            raise _timeout_error("the request to %s took longer than %d ms"
                                 % (host, timeout * 1000)) from None
        if isinstance(reason, ssl.SSLError):
            raise EgressError("TLS: %s" % (getattr(reason, "verify_message", None)
                                           or reason.reason or reason)) from None
        raise EgressError("the request to %s failed: %s" % (host, reason)) from None
    except (OSError, ValueError) as e:
        raise EgressError("the request to %s failed: %s" % (host, e)) from None


def _too_many_redirects(error):
    """True when error is urllib's "too many redirects" (it raises an HTTPError for it)."""
    import urllib.request
    return urllib.request.HTTPRedirectHandler.inf_msg in str(getattr(error, "msg", ""))
