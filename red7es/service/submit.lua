-- Append a client command exactly once per command id.
-- KEYS: 1 commands stream, 2 command ids hash, 3 meta hash, 4 (with ARGV[3]) a rate counter,
-- then (with ARGV[7]) the game's nudge, the workers' inbox and the work index
-- ARGV: 1 command id, 2 command bytes, 3 and 4 (optional, '' for none) the counter's limit and
-- window (ms), 5 (optional) the game's meta.created when the caller checked the command's
-- signature, 6 (optional) '1' to be answered the mark too, 7 8 9 (optional) the nudge's time
-- to live (ms), the game id and the inbox's approximate length cap, to wake a worker here
-- Returns {1, stream id} when appended, {2, stream id} for a duplicate, {0, ''} for no such game,
-- {3, ''} for an id reserved for bots' turns (only workers write those, with append.lua),
-- {4, ''} for a command whose data.id is text other than ARGV[1] (its answer would carry
-- data.id, never the id it was submitted under). Bytes Redis's cmsgpack cannot read that
-- far are appended all the same: the worker answers them as corrupt.
-- {5, ''} for a game that is over (its record is complete: nothing more is added to it).
-- {8, reason} for a broken game (meta.broken): no worker folds it again, so nothing is added
-- to it and its client is told at once, without reading the game first.
-- {6, size} for a command larger than 16384 bytes, the most a referee reads: first, before
-- anything reads it (cmsgpack would spend a second on 50 MB), and never stored.
if #ARGV[2] > 16384 then
  return {6, #ARGV[2]}
end
-- {7, key, error} when a key cannot take the command (a commands stream whose ids are used
-- up, a key of the wrong type: written by hand): nothing is written, and the game needs a human.
-- The meta is read once, here (issue #23: an EXISTS, an HGET and an HMGET were three
-- commands a turn): a meta without any of these fields is no game's (every game's has its
-- status and created from creation on). The script is atomic: what is checked below from
-- it stays true.
local state = redis.pcall('HMGET', KEYS[3], 'status', 'broken', 'created', 'change_id', 'version', 'cursor')
if state['err'] then
  return {7, KEYS[3], state['err']}
end
if not state[1] and not state[2] and not state[3] then
  return {0, ''}
end
-- {10, ''} when ARGV[5] is given (the HTTP gateway, which checked the turn's signature
-- against what it knew of the game) and the game is not that one any more: its id was
-- made again since (keys deleted by hand). Nothing is counted or stored; the caller
-- checks the command again against the game as it is.
if ARGV[5] and ARGV[5] ~= '' and state[3] ~= ARGV[5] then
  return {10, ''}
end
-- {9, ms} when a rate counter is given (KEYS[4]: the HTTP gateway's per seat, counted only
-- once the seat's signature passed) and this command takes it past ARGV[3] in its window of
-- ARGV[4] ms: the count is made here, with the append, and nothing is stored past the
-- limit; ms is the time left in the window. Counted once the game is known to exist (a
-- seat of no game counts nothing), before the other checks: a refused command counts too.
local counter = ARGV[3] and ARGV[3] ~= ''
if counter then
  local n = redis.call('INCR', KEYS[4])
  local left = redis.call('PTTL', KEYS[4])
  if n == 1 or left < 0 then
    redis.call('PEXPIRE', KEYS[4], ARGV[4])
    left = tonumber(ARGV[4])
  end
  if n > tonumber(ARGV[3]) then
    return {9, left}
  end
end
if string.sub(ARGV[1], 1, 4) == 'bot-' then
  return {3, ''}
end
local read, named = pcall(function() return cmsgpack.unpack(ARGV[2]).data.id end)
if read and type(named) == 'string' and named ~= ARGV[1] then
  return {4, ''}
end
-- With ARGV[6] = '1' (or a wake, below) an appended command's answer and a duplicate's
-- carry a third value, the mark: the id of the game's last change (meta.change_id, which
-- every append sets with its change; '0-0' for a game whose appends set none, an older
-- red7es's, or one that is no stream id), so the answer to this command, written after it,
-- is the first thing to read after the mark (issue #23: an XREVRANGE of the changes was a
-- command a turn).
-- With ARGV[7] a command stored (or a duplicate) puts the game on the work index (ZADD NX,
-- due at once: the sweep reads it should the post be lost) and wakes a worker in this same
-- atomic step: when this call added the game to the index (nobody had it: a worker hands
-- a game back by taking it off, in the step that finds nothing left to do), the game is
-- posted to the inbox, no nudge set (issue #23: the nudge's SET, and the hand-back's DEL
-- of it, were two commands a turn); when the game was on the index already (a worker is
-- on it, a post is on its way, or the sweep will look), as wake.lua does: the nudge set
-- and, only if this call set it, the game posted. (A post says i = 1 when the index took
-- the game: the worker that takes the post need not add the game again.) (A standalone Redis only: these keys are in other slots than the
-- game's.) Their replies come fourth and fifth: the wake's (1 posted, 0 the nudge was set
-- already) and the index add's ('' done); a key the caller's user may not write answers
-- its error's text there instead, and the caller wakes a worker another way. A command
-- refused wakes nobody and is not indexed. (issue #23: the wake was a script of its own,
-- and the index add and the mark commands of their own, each turn.)
-- The post of a command just stored (not a duplicate's) carries it when it is at most
-- CARRIED bytes: its stream id (c), the game's version and cursor as it was stored (v, k)
-- and its bytes (b), so that a worker whose table of the game is at that version (or
-- catches up to it) answers it without reading the game or taking its lease (append.lua,
-- Posted; issue #23: four commands a turn). The commands stream stays what workers
-- answer: a post is only a copy.
local CARRIED = 1024
local waking = ARGV[7] and ARGV[7] ~= ''
local function answered(code, id)  -- (code 1: id is the command just stored)
  if ARGV[6] ~= '1' and not waking then
    return {code, id}
  end
  local mark = state[4]
  if not mark or not string.match(mark, '^%d+%-%d+$') then
    mark = '0-0'  -- (none yet, or not a stream id: written by hand; read from the start)
  end
  local reply = {code, id, mark}
  if waking then
    local first = counter and 5 or 4  -- the nudge's key; the inbox and the index follow it
    local added = redis.pcall('ZADD', KEYS[first + 2], 'NX', 0, ARGV[8])
    local indexed = not (type(added) == 'table' and added['err'])
    local woken = 1
    if added ~= 1 then
      woken = redis.pcall('SET', KEYS[first], 1, 'NX', 'PX', ARGV[7])
    end
    if type(woken) == 'table' and woken['err'] then
      woken = woken['err']
    elseif woken then
      -- i: the game is on the index (the worker taking it need not add it again)
      local post = {'g', ARGV[8]}
      if indexed then post = {'g', ARGV[8], 'i', 1} end
      if code == 1 and #ARGV[2] <= CARRIED and state[5] and state[6] then
        for _, value in ipairs({'c', id, 'v', state[5], 'k', state[6], 'b', ARGV[2]}) do
          post[#post + 1] = value
        end
      end
      woken = redis.pcall('XADD', KEYS[first + 1], 'MAXLEN', '~', ARGV[9], '*', unpack(post))
      woken = type(woken) == 'table' and woken['err'] or 1
    else
      woken = 0
    end
    reply[4], reply[5] = woken, indexed and '' or added['err']
  end
  return reply
end
-- redis.pcall answers an error as a table with an err field instead of raising it
local broken = state[2] and state[2] ~= ''  -- (an empty reason is no reason, as workers read it)
-- The command is stored first and its id claimed after (below), which needs HSETNX and
-- XDEL: a user without them (the HTTP gateway's, docs/gateway.md) asks whether the id is
-- taken first, as on a Redis without the check (before 7). So does a game broken or over,
-- which stores nothing but still answers a duplicate (its client may have lost the answer
-- to the game's last turn).
local store_first = type(redis.acl_check_cmd) == 'function'
  and redis.acl_check_cmd('HSETNX', KEYS[2], ARGV[1], '0-0')
  and redis.acl_check_cmd('XDEL', KEYS[1], '0-0')
if not store_first or broken or state[1] == 'over' then
  local existing = redis.pcall('HGET', KEYS[2], ARGV[1])
  if type(existing) == 'table' then
    return {7, KEYS[2], existing.err}
  end
  if existing then
    return answered(2, existing)
  end
end
if broken then
  return {8, state[2]}
end
if state[1] == 'over' then
  return {5, ''}
end
-- Stored, then its id claimed (issue #23: an HGET before, a command a turn). The XADD is
-- the first write: if it is refused, nothing was written. The claim (HSETNX) fails for a
-- duplicate: its entry is deleted again, in this same atomic step (nobody ever reads it),
-- and the first one's stream id is answered. (The deleted entry's id stays used: a
-- worker's explicit id for a timed bot's command is checked against the stream's last id,
-- append.lua.)
local id = redis.pcall('XADD', KEYS[1], '*', 'c', ARGV[2])
if type(id) == 'table' then
  return {7, KEYS[1], id.err}
end
if not store_first then
  redis.call('HSET', KEYS[2], ARGV[1], id)
  return answered(1, id)
end
local claimed = redis.pcall('HSETNX', KEYS[2], ARGV[1], id)
if type(claimed) == 'table' then
  redis.call('XDEL', KEYS[1], id)
  return {7, KEYS[2], claimed.err}
end
if claimed == 0 then
  redis.call('XDEL', KEYS[1], id)
  return answered(2, redis.call('HGET', KEYS[2], ARGV[1]))
end
return answered(1, id)
