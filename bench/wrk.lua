-- wrk script of every pixgate bench: authenticated requests, a JSON summary on the last line.
--
-- Environment:
--   BENCH_TOKEN         bearer token, or several separated by commas, used in turn (one per
--                       account: load spread over accounts); none: unauthenticated
--   BENCH_CERT          the client certificate each token is bound to, percent-encoded PEM,
--                       comma-separated in the same order as BENCH_TOKEN; sent with its token
--                       as X-SSL-Client-Cert (the gateway refuses a token without it)
--   BENCH_MODE          "get" (default) or "cash-out" (POST /api/pix/cash-out, unique externalIds)
--   BENCH_RUN           prefix of externalIds, unique per wrk run (cash-out)
--   BENCH_MAX_REQUESTS  stop each thread after this many responses (memory bench)
--   BENCH_DONE_FILE     with BENCH_MAX_REQUESTS: touch "<file>.<thread>" when a thread stops
--
-- wrk gives every thread its own Lua state: setup() hands each one an id, so
-- "<run>-<thread>-<counter>" never repeats across threads or runs.

local function split(value)
   local items = {}
   for item in string.gmatch(value or "", "[^,]+") do
      table.insert(items, item)
   end
   return items
end

local tokens = split(os.getenv("BENCH_TOKEN"))
local certs = split(os.getenv("BENCH_CERT"))
if #certs > 0 and #certs ~= #tokens then
   error(string.format("BENCH_CERT has %d certificates for %d tokens", #certs, #tokens))
end
local mode = os.getenv("BENCH_MODE") or "get"
local run = os.getenv("BENCH_RUN") or tostring(os.time())
local max_requests = tonumber(os.getenv("BENCH_MAX_REQUESTS") or "")

local threads = {}
local thread_no = 0

function setup(thread)
   thread_no = thread_no + 1
   thread:set("id", thread_no)
   table.insert(threads, thread)
end

local counter = 0
local responses = 0
local headers = {}
local cash_out_body = '{"value":0.01,"externalId":"%s-%d-%d","description":"bench",' ..
   '"details":{"key":"%s","keyType":"RANDOM","name":"Fulano de Tal","document":"%s"}}'
-- A valid CPF and a random key that the sandbox settles as CONFIRMED.
local document = os.getenv("BENCH_DOCUMENT") or "52998224725"
local pix_key = os.getenv("BENCH_PIX_KEY") or "123e4567-e89b-42d3-a456-426614174000"

-- The token of index i, with the certificate it is bound to.
local function authenticate(i)
   headers["Authorization"] = "Bearer " .. tokens[i]
   if #certs > 0 then
      headers["X-SSL-Client-Cert"] = certs[i]
   end
end

function init(args)
   if #tokens > 0 then
      authenticate(1)
   end
   if mode == "cash-out" then
      headers["Content-Type"] = "application/json"
   end
end

function request()
   if mode == "cash-out" then
      counter = counter + 1
      if #tokens > 1 then
         authenticate(counter % #tokens + 1)
      end
      local body = string.format(cash_out_body, run, id, counter, pix_key, document)
      return wrk.format("POST", "/api/pix/cash-out", headers, body)
   end
   return wrk.format("GET", nil, headers, nil)
end

-- wrk keeps a stopped thread's slot until the duration ends: the bench sees the marker
-- file and interrupts wrk (SIGINT), which prints the summary at once.
local done_file = os.getenv("BENCH_DONE_FILE")

if max_requests then
   function response(status, resp_headers, body)
      responses = responses + 1
      if responses == max_requests then
         wrk.thread:stop()
         if done_file then
            io.open(done_file .. "." .. id, "w"):close()
         end
      end
   end
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      '{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"status_errors":%d,' ..
      '"socket_errors":%d}\n',
      summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
      e.status, e.connect + e.read + e.write + e.timeout))
end
