"""The demo's weather service: the upstream the Forecast sample calls through the egress gateway.

`toolgate up --demo` runs it on the loopback (python3 weather.py PORT) and lets the executors reach
127.0.0.1 for it. It answers GET /v1/forecast?city=NAME with a made-up forecast for an API key in
the X-Api-Key header (any non-empty key: it stands for a real weather API's).
"""
import json
import sys
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

CONDITIONS = ("sunny", "cloudy", "rain", "wind")


class Forecast(BaseHTTPRequestHandler):
    server_version = "demo-weather/1"

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path != "/v1/forecast":
            return self.answer(404, {"error": "no such path"})
        if not self.headers.get("X-Api-Key"):
            return self.answer(401, {"error": "an API key is required (X-Api-Key)"})
        city = parse_qs(url.query).get("city", [""])[0].strip()
        if not city:
            return self.answer(400, {"error": "city is required"})
        seed = zlib.crc32(city.lower().encode())
        self.answer(200, {
            "city": city,
            "temperature_c": 5 + seed % 25,
            "conditions": CONDITIONS[seed % len(CONDITIONS)],
            "source": "demo weather service",
        })

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        sys.stderr.write("%s %s\n" % (self.address_string(), format % args))


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Forecast).serve_forever()
