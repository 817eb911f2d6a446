"""Lua scripts of ``RedisStore``: each is one atomic step and one round trip.

Keys a script can only know after reading a value (the pending pointer of the
thread a record names, the record a token points to) are built inside the
script from the prefix; the store runs on one Redis, not a cluster.
"""

#: KEYS: seen, seq, next, jobs. ARGV: seen ttl ms, kind, inbound id, order key, payload,
#: order ttl ms, a value unique to this call. Returns 1 when the job was appended, 0 when the
#: dedupe key existed: the dedupe key holds the call's value, so the client re-sending the
#: script after a lost reply hears 1 again (and appends nothing more).
#: Both turnstile counters always get the same expiry, so they vanish together once idle: a
#: first seq (the counter was gone) finds no completed counter to keep alive.
#: No MAXLEN: an accepted job is never trimmed unread (completing a job deletes its entry).
ACCEPT_JOB = """
local previous = redis.call('SET', KEYS[1], ARGV[7], 'NX', 'GET', 'PX', ARGV[1])
if previous then
  if previous == ARGV[7] then return 1 end
  return 0
end
local seq = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
if seq > 1 then redis.call('PEXPIRE', KEYS[3], ARGV[6]) end
redis.call('XADD', KEYS[4], '*',
  'kind', ARGV[2], 'inbound_id', ARGV[3], 'order_key', ARGV[4], 'seq', seq, 'payload', ARGV[5])
return 1
"""

#: KEYS: ask record, jobs[, the interaction's dedupe marker]. ARGV: prefix, request id, a value
#: unique to this call, answered_by JSON, response JSON, has follow-up ("1"/"0"), follow-up
#: inbound id, order key, payload, order ttl ms, marker ttl ms ("" without a marker),
#: the chat thread key the record's agent thread must still be current in ("": unchecked), the
#: answer's time (unix seconds; "" for a decline: nothing noted), the note's ttl ms. An answer is
#: noted for its agent thread (``lookup.answered_key``: request id and time, JSON).
#: Returns {"claimed", record fields} | {"already_answered", record fields} | {"missing"} |
#: {"duplicate", record fields} (the marker was set by another call: nothing done) |
#: {"restarted", record fields} (the chat thread has another agent thread now: nothing done).
#: The marker and the record keep the call's value (``claim_mark``): the client re-sending the
#: script after a lost reply hears "claimed" again, and appends nothing more.
CLAIM_ANSWER = """
if ARGV[11] ~= '' then
  local previous = redis.call('SET', KEYS[3], ARGV[3], 'NX', 'GET', 'PX', ARGV[11])
  if previous and previous ~= ARGV[3] then return {'duplicate', redis.call('HGETALL', KEYS[1])} end
end
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
local state = redis.call('HMGET', KEYS[1], 'status', 'claim_mark')
if state[1] ~= 'pending' then
  if state[2] == ARGV[3] then return {'claimed', redis.call('HGETALL', KEYS[1])} end
  return {'already_answered', redis.call('HGETALL', KEYS[1])}
end
local thread_id = redis.call('HGET', KEYS[1], 'thread_id')
if ARGV[12] ~= '' then
  local current = redis.call('GET', ARGV[1] .. ':thread:' .. ARGV[12])
  if current and current ~= thread_id then return {'restarted', redis.call('HGETALL', KEYS[1])} end
end
redis.call('HSET', KEYS[1], 'status', 'answered', 'answered_by', ARGV[4], 'response', ARGV[5],
  'claim_mark', ARGV[3])
local pointer = ARGV[1] .. ':pending:' .. thread_id
if redis.call('GET', pointer) == ARGV[2] then redis.call('DEL', pointer) end
redis.call('ZREM', ARGV[1] .. ':asks', ARGV[2])
if ARGV[13] ~= '' then
  redis.call('SET', ARGV[1] .. ':state:answered:' .. thread_id,
    cjson.encode({request_id = ARGV[2], at = tonumber(ARGV[13])}), 'PX', ARGV[14])
end
if ARGV[6] == '1' then
  local seq = redis.call('INCR', ARGV[1] .. ':seq:' .. ARGV[8])
  redis.call('PEXPIRE', ARGV[1] .. ':seq:' .. ARGV[8], ARGV[10])
  redis.call('PEXPIRE', ARGV[1] .. ':next:' .. ARGV[8], ARGV[10])
  redis.call('XADD', KEYS[2], '*',
    'kind', 'answer', 'inbound_id', ARGV[7], 'order_key', ARGV[8], 'seq', seq, 'payload', ARGV[9])
end
return {'claimed', redis.call('HGETALL', KEYS[1])}
"""

#: KEYS: ask record, token, thread pending pointer, the index of open ones. ARGV: request id,
#: expiry (unix ms), creation time (unix seconds), then the record's fields and values. The
#: three keys of a new clarification, written together and expiring together, and its entry in
#: the index (by creation time: the metrics count it without reading records); writing them
#: again gives the same state.
SAVE_PENDING = """
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[1], 'PXAT', ARGV[2])
redis.call('SET', KEYS[3], ARGV[1], 'PXAT', ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
return 1
"""

#: KEYS: ask record. ARGV: message reference JSON. Keeps the TTL and every other field
#: (a claim that happened meanwhile stays). Returns 1 when the record exists.
SET_MESSAGE_REF = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'message_ref', ARGV[1])
return 1
"""

#: The turnstile's advance past a job (KEYS[3] seq, KEYS[4] next; ARGV[3] the job's seq, ARGV[5]
#: the order ttl ms), shared by the scripts that end a job: once every handed-out seq is
#: complete both counters go.
_ADVANCE = """local counters = redis.call('MGET', KEYS[4], KEYS[3])
local completed = math.max(tonumber(counters[1] or '0'), tonumber(ARGV[3]))
if completed >= tonumber(counters[2] or '0') then
  redis.call('DEL', KEYS[3], KEYS[4])
else
  redis.call('SET', KEYS[4], completed, 'PX', ARGV[5])
  redis.call('PEXPIRE', KEYS[3], ARGV[5])
end
"""

#: KEYS: jobs, done, seq, next. ARGV: group, entry id, job seq, done ttl ms, order ttl ms.
#: The turnstile advances only when this call acknowledged the entry, so a job completed
#: twice (by a slow worker and by the one that claimed it) advances it once. Once every
#: handed-out seq is complete both counters go: the next job of that chat thread gets
#: seq 1, which therefore means "nothing before it is outstanding: run at once".
COMPLETE_JOB = (
    """
redis.call('SET', KEYS[2], '1', 'PX', ARGV[4])
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('XDEL', KEYS[1], ARGV[2])
"""
    + _ADVANCE
    + "return 1\n"
)

#: KEYS: jobs, done, seq, next. ARGV: group, entry id, job seq, done ttl ms, order ttl ms.
#: ``admin backlog --drop``: the job is removed whoever holds it, read or not (no consumer is
#: made for it): acknowledged when held, deleted, marked done (a redelivery is not run) and the
#: turnstile advanced as ``COMPLETE_JOB`` does. Returns "held" or "unread" (dropped here),
#: "completed" (acknowledged already: nothing done) or "gone" (no such entry).
DROP_JOB = (
    """
if not redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])[1] then return 'gone' end
local last
local groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
if type(groups) == 'table' and not groups.err then
  for _, group in ipairs(groups) do
    local fields = {}
    for i = 1, #group, 2 do fields[group[i]] = group[i + 1] end
    if fields['name'] == ARGV[1] then last = fields['last-delivered-id'] end
  end
end
local was = 'unread'
if last then
  if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 1 then
    was = 'held'
  else
    local ms, seq = string.match(ARGV[2], '^(%d+)-(%d+)$')
    local last_ms, last_seq = string.match(last, '^(%d+)-(%d+)$')
    ms, seq, last_ms, last_seq = tonumber(ms), tonumber(seq), tonumber(last_ms), tonumber(last_seq)
    if ms < last_ms or (ms == last_ms and seq <= last_seq) then return 'completed' end
  end
end
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], '1', 'PX', ARGV[4])
"""
    + _ADVANCE
    + "return was\n"
)

#: KEYS: jobs, seq, next. ARGV: group, entry id, job seq, order ttl ms, kind, inbound id,
#: order key, payload. A job not run yet moved behind every job of its order key: acknowledged
#: (once: returns 0 when it was already), the turnstile advanced past it, appended again with
#: the next seq (so the counters never catch up here); no done marker.
REQUEUE_JOB = """
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('XDEL', KEYS[1], ARGV[2])
local seq = redis.call('INCR', KEYS[2])
local completed = math.max(tonumber(redis.call('GET', KEYS[3]) or '0'), tonumber(ARGV[3]))
redis.call('SET', KEYS[3], completed, 'PX', ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('XADD', KEYS[1], '*',
  'kind', ARGV[5], 'inbound_id', ARGV[6], 'order_key', ARGV[7], 'seq', seq, 'payload', ARGV[8])
return 1
"""

#: KEYS: thread. ARGV: candidate thread id, ttl ms. Returns the thread id in force.
THREAD_FOR_CHAT = """
local current = redis.call('GET', KEYS[1])
if current then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return current
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]
"""

#: KEYS: thread, optionally a state key. ARGV: candidate thread id, ttl ms, prefix, then the
#: state's JSON and ttl ms when KEYS[2] is given. Returns {thread id in force, its last answer's
#: note (``lookup.answered_key``) or false, its open record}: the lookups every message starts with
#: (the pointer and the note read with one ``MGET``). A thread made here (a fresh random id) has no
#: open record or note to look for. The state is saved when the thread points at no record.
THREAD_WITH_PENDING = """
local thread_id = redis.call('GET', KEYS[1])
if thread_id then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  local found = redis.call('MGET', ARGV[3] .. ':pending:' .. thread_id,
    ARGV[3] .. ':state:answered:' .. thread_id)
  if found[1] then return {thread_id, found[2], redis.call('HGETALL', ARGV[3] .. ':ask:' .. found[1])} end
  if KEYS[2] then redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[5]) end
  return {thread_id, found[2]}
end
thread_id = ARGV[1]
redis.call('SET', KEYS[1], thread_id, 'PX', ARGV[2])
if KEYS[2] then redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[5]) end
return {thread_id}
"""

#: KEYS: a pointer (token or thread pending). ARGV: key prefix of the target record.
#: Returns the fields of the record the pointer points at (empty when either is gone).
FOLLOW_POINTER = """
local target = redis.call('GET', KEYS[1])
if not target then return {} end
return redis.call('HGETALL', ARGV[1] .. target)
"""

#: KEYS: jobs. ARGV: group, consumer, min idle ms, count.
#: Returns {entry id, flat fields, deliveries} rows for the entries taken over.
CLAIM_STALE = """
local claimed = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], '0-0', 'COUNT', ARGV[4])
local rows = {}
for _, entry in ipairs(claimed[2]) do
  local info = redis.call('XPENDING', KEYS[1], ARGV[1], entry[1], entry[1], 1)
  local deliveries = 1
  if info[1] then deliveries = info[1][4] end
  table.insert(rows, {entry[1], entry[2], deliveries})
end
return rows
"""

#: KEYS: jobs. ARGV: group, consumer, entry ids…
#: Resets the idle time of the entries ``consumer`` still holds (``XCLAIM`` to itself, which
#: would otherwise take an entry from whoever holds it now). Returns one status per entry:
#: "held", "taken" (another consumer holds it) or "gone" (acknowledged).
KEEP_JOBS = """
local statuses = {}
for i = 3, #ARGV do
  local info = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if not info[1] then
    table.insert(statuses, 'gone')
  elseif info[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
    table.insert(statuses, 'held')
  else
    table.insert(statuses, 'taken')
  end
end
return statuses
"""

#: KEYS: jobs. ARGV: group, consumer, idle ms, entry ids…
#: Marks the entries ``consumer`` still holds as idle for ``idle ms`` (``XCLAIM … IDLE``), so
#: the next ``XAUTOCLAIM`` of any consumer takes them. Entries of other consumers stay as they are.
RELEASE_JOBS = """
for i = 4, #ARGV do
  local info = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if info[1] and info[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'IDLE', ARGV[3], 'JUSTID')
  end
end
return 1
"""

#: KEYS: a job's delivery record (a hash), thread cleanup schedule, optionally a state key saved
#: with the plan. ARGV: the plan (JSON; "" only reads), ttl ms, thread id to schedule ("" none),
#: its due time, then the state's JSON and ttl ms when KEYS[3] is given. The first plan recorded
#: for a job stays (a second writer, or a retry after a lost reply, gets it back); the state is
#: saved with the plan that is recorded, not with one that lost. Returns the hash as a flat list:
#: "plan", then one field per item delivered (its index) with how it ended (a plan recorded by
#: this call is the whole hash, outcomes being noted only under a recorded plan: it is answered
#: without reading the hash back).
RECORD_DELIVERY = """
if ARGV[3] ~= '' then redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3]) end
if ARGV[1] ~= '' and redis.call('HSETNX', KEYS[1], 'plan', ARGV[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if KEYS[3] then redis.call('SET', KEYS[3], ARGV[5], 'PX', ARGV[6]) end
  return {'plan', ARGV[1]}
end
return redis.call('HGETALL', KEYS[1])
"""

#: KEYS: cleanup schedule (sorted set). ARGV: now (unix seconds), count.
#: Returns a flat list: thread id, due time, … for the threads due at ``now``.
DUE_THREADS = """
return redis.call('ZRANGE', KEYS[1], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, ARGV[2], 'WITHSCORES')
"""

#: KEYS: cleanup schedule (sorted set). ARGV: thread id, due (unix seconds).
#: Unschedules the thread only while it is still due: a use that pushed it later keeps it.
THREAD_CLEANED = """
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if due and tonumber(due) <= tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
"""

#: KEYS: jobs. ARGV: group. Deletes the entries every reader is done with: those up to the
#: group's last delivered id that are not pending (so acknowledged). Unread and pending entries
#: stay, whatever the stream's length. Returns how many entries went.
TRIM_ACKNOWLEDGED = """
local groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
if type(groups) ~= 'table' or groups.err then return 0 end
local last
for _, group in ipairs(groups) do
  local fields = {}
  for i = 1, #group, 2 do fields[group[i]] = group[i + 1] end
  if fields['name'] == ARGV[1] then last = fields['last-delivered-id'] end
end
if not last or last == '0-0' then return 0 end
local oldest_pending = redis.call('XPENDING', KEYS[1], ARGV[1])[2]
if oldest_pending then return redis.call('XTRIM', KEYS[1], 'MINID', oldest_pending) end
return redis.call('XTRIM', KEYS[1], 'MINID', last) + redis.call('XDEL', KEYS[1], last)
"""

#: KEYS: jobs. ARGV: group, idle ms, the caller's own consumer name.
#: Deletes consumers that hold no entries and were not heard from for ``idle ms`` (processes
#: gone; a live one that is deleted is made again by its next read). Returns their names.
REMOVE_IDLE_CONSUMERS = """
local consumers = redis.pcall('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if type(consumers) ~= 'table' or consumers.err then return {} end
local removed = {}
for _, consumer in ipairs(consumers) do
  local fields = {}
  for i = 1, #consumer, 2 do fields[consumer[i]] = consumer[i + 1] end
  if tonumber(fields['pending']) == 0 and tonumber(fields['idle']) >= tonumber(ARGV[2])
      and fields['name'] ~= ARGV[3] then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], fields['name'])
    table.insert(removed, fields['name'])
  end
end
return removed
"""

#: KEYS: lease. ARGV: holder, ttl ms. Returns 1 when held by ``holder`` afterwards.
ACQUIRE_LEASE = """
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if current then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""

#: KEYS: lease, then state keys. ARGV: holder, ttl ms. The lease taken when free (not renewed when
#: ``holder`` has it already) and the state keys' values read in the same step: {1 when held by
#: ``holder`` afterwards else 0, each value}. Once per message: two commands when it is taken.
#: (A few keys: Lua's ``unpack`` takes some thousands at most.)
LEASE_AND_READ = """
local held = 0
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then held = 1
elseif redis.call('GET', KEYS[1]) == ARGV[1] then held = 1 end
local found = {held}
if #KEYS > 1 then
  for i, value in ipairs(redis.call('MGET', unpack(KEYS, 2))) do found[i + 1] = value end
end
return found
"""

#: KEYS: lease. ARGV: holder. Deletes the lease only if ``holder`` has it.
RELEASE_LEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

#: KEYS: jobs. ARGV: group, consumer, count. Reads only: the entries delivered to ``consumer``
#: and not acknowledged (its pending list, ``XPENDING … consumer``), each as {entry id, flat
#: fields, deliveries}; entries deleted meanwhile are left out.
OWN_ENTRIES = """
local rows = {}
for _, held in ipairs(redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', ARGV[3], ARGV[2])) do
  local entry = redis.call('XRANGE', KEYS[1], held[1], held[1])
  if entry[1] then table.insert(rows, {held[1], entry[1][2], held[4]}) end
end
return rows
"""

#: KEYS: the answer's votes (a hash: person -> "vote|call value|vote before"). ARGV: person, vote,
#: a value unique to this call, ttl ms. Returns the person's vote before this call ("" for none);
#: the client re-sending the script after a lost reply finds its own call value and hears the
#: same answer again (not its own vote as the one replaced).
CAST_VOTE = """
local current = redis.call('HGET', KEYS[1], ARGV[1])
local before = ''
if current then
  local vote, mark, earlier = string.match(current, '^([^|]*)|([^|]*)|([^|]*)$')
  if mark == ARGV[3] then return earlier end
  before = vote or ''
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '|' .. ARGV[3] .. '|' .. before)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return before
"""
