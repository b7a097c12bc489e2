-- wrk script: each connection sends one request every PACE_MS (default 50 ms), cycling
-- through the paths in PATHS (separated by spaces), so N connections offer about
-- N * 1000 / PACE_MS requests per second whatever the latency (wrk has no rate option).
local paths = {}
local pace = tonumber(os.getenv("PACE_MS") or "50")
local counter = 0

function init(args)
  for p in string.gmatch(os.getenv("PATHS"), "%S+") do
    table.insert(paths, p)
  end
end

function request()
  counter = counter + 1
  return wrk.format("GET", paths[(counter % #paths) + 1])
end

function delay()
  return pace
end

function done(summary, latency, requests)
  io.write(string.format(
    "JSON {\"requests\": %d, \"seconds\": %.3f, \"errors\": %d, \"p50_ms\": %.2f, " ..
    "\"p90_ms\": %.2f, \"p99_ms\": %.2f, \"max_ms\": %.2f, \"non_2xx\": %d, " ..
    "\"socket_errors\": %d}\n",
    summary.requests, summary.duration / 1e6,
    summary.errors.connect + summary.errors.read + summary.errors.write +
      summary.errors.status + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
