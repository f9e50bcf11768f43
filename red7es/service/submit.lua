-- Append a client command exactly once per command id.
-- KEYS: 1 commands stream, 2 command ids hash, 3 meta hash, 4 (optional) a rate counter
-- ARGV: 1 command id, 2 command bytes, 3 and 4 (with KEYS[4]) the counter's limit and window (ms),
-- 5 (optional) the game's meta.created when the caller checked the command's signature
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
local state = redis.pcall('HMGET', KEYS[3], 'status', 'broken', 'created')
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
if KEYS[4] then
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
-- redis.pcall answers an error as a table with an err field instead of raising it
local existing = redis.pcall('HGET', KEYS[2], ARGV[1])
if type(existing) == 'table' then
  return {7, KEYS[2], existing.err}
end
if existing then
  return {2, existing}
end
if state[2] and state[2] ~= '' then  -- (an empty reason is no reason, as workers read it)
  return {8, state[2]}
end
if state[1] == 'over' then
  return {5, ''}
end
-- the first write: if it is refused, nothing was written
local id = redis.pcall('XADD', KEYS[1], '*', 'c', ARGV[2])
if type(id) == 'table' then
  return {7, KEYS[1], id.err}
end
redis.call('HSET', KEYS[2], ARGV[1], id)
return {1, id}
