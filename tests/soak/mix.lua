-- wrk script for tests/soak/run.sh: the last thread sends invalid reviews (INVALID_FILES), the
-- others valid ones (VALID_FILES), to /validate and /mutate in turn. Each thread counts answers by
-- status; done() prints one "key value" line per figure for run.sh to read.
local threads = {}
local next_id = 0

function setup(thread)
  next_id = next_id + 1
  thread:set("id", next_id)
  table.insert(threads, thread)
end

local function split(s)
  local out = {}
  for f in string.gmatch(s or "", "[^:]+") do table.insert(out, f) end
  return out
end

local reqs = {}
local i = 0
sent, ok200, got400, other = 0, 0, 0, 0

function init(args)
  invalid = (id == tonumber(os.getenv("THREADS") or "0"))
  local files = split(os.getenv(invalid and "INVALID_FILES" or "VALID_FILES"))
  local headers = {["Content-Type"] = "application/json"}
  for n, path in ipairs(files) do
    local f = assert(io.open(path, "rb"))
    local body = f:read("*a")
    f:close()
    local ep = (n % 2 == 0) and "/mutate" or "/validate"
    table.insert(reqs, wrk.format("POST", ep, headers, body))
  end
end

function request()
  i = i % #reqs + 1
  sent = sent + 1
  return reqs[i]
end

function response(status, headers, body)
  if status == 200 then ok200 = ok200 + 1
  elseif status == 400 then got400 = got400 + 1
  else other = other + 1 end
end

function done(summary, latency, requests)
  local v = {sent = 0, ok200 = 0, got400 = 0, other = 0}
  local inv = {sent = 0, ok200 = 0, got400 = 0, other = 0}
  for _, t in ipairs(threads) do
    local acc = t:get("invalid") and inv or v
    for k, _ in pairs(acc) do acc[k] = acc[k] + t:get(k) end
  end
  local e = summary.errors
  local out = {
    "requests " .. summary.requests,
    "duration_s " .. string.format("%.1f", summary.duration / 1e6),
    "transport_errors " .. (e.connect + e.read + e.write + e.timeout),
    "errors_detail connect=" .. e.connect .. " read=" .. e.read .. " write=" .. e.write ..
      " timeout=" .. e.timeout,
    "p50_ms " .. string.format("%.2f", latency:percentile(50) / 1000),
    "p99_ms " .. string.format("%.2f", latency:percentile(99) / 1000),
    "max_ms " .. string.format("%.2f", latency.max / 1000),
  }
  for k, x in pairs(v) do table.insert(out, "valid_" .. k .. " " .. x) end
  for k, x in pairs(inv) do table.insert(out, "invalid_" .. k .. " " .. x) end
  io.write(table.concat(out, "\n") .. "\n")
end
