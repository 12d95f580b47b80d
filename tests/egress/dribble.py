"""An HTTP answer that comes one byte at a time, for the egress tests' upstreams.

A client whose timeout bounds each wait rather than the whole request never times out against
it: each byte comes within 0.3 s, and the whole answer would take a minute.
"""

import select


def dribble(handler):
    """Answers handler's request (a BaseHTTPRequestHandler) with 200 and a declared million bytes,
    writing one byte every 0.3 s, 200 at most, until the client hangs up."""
    handler.send_response(200)
    handler.send_header("Content-Length", "1000000")
    handler.end_headers()
    for _ in range(200):
        # The client hung up (readable at its end of stream): no one is left to send to.
        if select.select([handler.connection], [], [], 0.3)[0]:
            return
        try:
            handler.wfile.write(b".")
        except OSError:
            return
