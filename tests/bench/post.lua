-- wrk script: POSTs the AdmissionReview in $BODY and prints one JSON line of results.
local f = assert(io.open(os.getenv("BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
if os.getenv("CLOSE") == "1" then
  wrk.headers["Connection"] = "close"
end

function done(summary, latency, requests)
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format(
    '{"requests":%d,"rps":%.0f,"p50_ms":%.3f,"p99_ms":%.3f,"p999_ms":%.3f,"errors":%d,"non2xx":%d,"duration_s":%.3f}\n',
    summary.requests, summary.requests / secs, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, latency:percentile(99.9) / 1000,
    e.connect + e.read + e.write + e.timeout, e.status, secs))
end
