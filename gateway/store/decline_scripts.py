"""Lua scripts of the job stream for a replica that lacks some platforms (see ``WorkerPool``)."""

#: KEYS: jobs. ARGV: group, consumer, min idle ms, count, cutoff ms, platforms to skip…
#: ``CLAIM_STALE`` for a consumer that lacks some platforms: the stale entries (``XPENDING IDLE``,
#: scanned in pages, at most 1000) are claimed (``XCLAIM``) unless their order key starts with a
#: skipped platform and they were accepted at or after the cutoff (older ones are claimed anyway,
#: to be ended). Returns {entry id, flat fields, deliveries} rows like ``CLAIM_STALE``.
CLAIM_STALE_SKIPPING = """
local skip = {}
for i = 6, #ARGV do skip[ARGV[i]] = true end
local cutoff = tonumber(ARGV[5])
local rows = {}
local start = '-'
local scanned = 0
while #rows < tonumber(ARGV[4]) and scanned < 1000 do
  local page = redis.call('XPENDING', KEYS[1], ARGV[1], 'IDLE', ARGV[3], start, '+', 100)
  if #page == 0 then break end
  for _, info in ipairs(page) do
    scanned = scanned + 1
    local id = info[1]
    start = '(' .. id
    local entry = redis.call('XRANGE', KEYS[1], id, id)
    local skipped = false
    if entry[1] then
      local fields = entry[1][2]
      for j = 1, #fields, 2 do
        if fields[j] == 'order_key' then
          local platform = string.match(fields[j + 1], '^([^:]*):')
          local at = tonumber(string.match(id, '^(%d+)'))
          skipped = platform ~= nil and skip[platform] ~= nil and at >= cutoff
        end
      end
    end
    if not skipped and #rows < tonumber(ARGV[4]) then
      local claimed = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], id)
      if claimed[1] and claimed[1][2] then
        table.insert(rows, {id, claimed[1][2], info[4] + 1})
      end
    end
  end
end
return rows
"""

#: KEYS: jobs. ARGV: group, consumer, idle ms, entry ids…
#: ``RELEASE_JOBS`` for jobs this consumer declined without running them (it lacks their
#: platform): also takes back the delivery that handed them here (``RETRYCOUNT``), so the replica
#: that runs them sees the delivery count they would have had. Safe to re-send: an entry already
#: declined (idle that long) keeps its count.
DECLINE_JOBS = """
for i = 4, #ARGV do
  local info = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if info[1] and info[1][2] == ARGV[2] then
    local count = info[1][4]
    if info[1][3] < tonumber(ARGV[3]) then count = math.max(count - 1, 0) end
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i],
      'IDLE', ARGV[3], 'RETRYCOUNT', count, 'JUSTID')
  end
end
return 1
"""
