-- wrk script: POST a small event with keep-alive (Pistache 0.0.5 closes HTTP/1.1 connections
-- that do not ask for it) and the API key from the environment.
wrk.method = "POST"
wrk.body = '{"event":{"hello":"world","n":42}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Connection"] = "keep-alive"
local key = os.getenv("TOOLGATE_BENCH_KEY")
if key and key ~= "" then wrk.headers["Authorization"] = key end

-- TOOLGATE_BENCH_RATE (requests per second, per wrk thread) paces the requests instead of
-- sending each as soon as its connection is free: every request is given a slot on a fixed
-- schedule and waits for it. wrk times a request from when it is sent, so the latency is the
-- service's at that rate, as long as there are enough connections to keep the schedule.
local rate = tonumber(os.getenv("TOOLGATE_BENCH_RATE") or "")
if rate and rate > 0 then
  local ffi = require("ffi")
  ffi.cdef[[
    typedef struct { long tv_sec; long tv_nsec; } tg_timespec;
    int clock_gettime(int clock_id, tg_timespec* tp);
  ]]
  local now_ts = ffi.new("tg_timespec")
  local function now_ms()
    ffi.C.clock_gettime(1, now_ts)  -- CLOCK_MONOTONIC
    return tonumber(now_ts.tv_sec) * 1000 + tonumber(now_ts.tv_nsec) / 1e6
  end
  local interval_ms = 1000 / rate
  local next_slot = nil
  delay = function()
    local now = now_ms()
    -- A schedule that fell behind (a slow answer) restarts from now rather than bursting.
    if next_slot == nil or next_slot < now - interval_ms then next_slot = now end
    next_slot = next_slot + interval_ms
    return math.max(0, next_slot - now)
  end
end

done = function(summary, latency, requests)
  local non2xx = summary.errors.status
  io.write(string.format("RESULT rps=%.0f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f requests=%d non2xx=%d errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(90) / 1000, latency:percentile(99) / 1000, summary.requests, non2xx,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
