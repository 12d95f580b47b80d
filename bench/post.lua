-- wrk script: POST a small event with keep-alive (Pistache 0.0.5 closes HTTP/1.1 connections
-- that do not ask for it) and the API key from the environment.
wrk.method = "POST"
wrk.body = '{"event":{"hello":"world","n":42}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Connection"] = "keep-alive"
local key = os.getenv("TOOLGATE_BENCH_KEY")
if key and key ~= "" then wrk.headers["Authorization"] = key end

done = function(summary, latency, requests)
  local non2xx = summary.errors.status
  io.write(string.format("RESULT rps=%.0f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f requests=%d non2xx=%d errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(90) / 1000, latency:percentile(99) / 1000, summary.requests, non2xx,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
