-- A worker hands a game back after folding it, in one round trip (issue #23): release its
-- lease if still ours, clear the nudge, then read what the game has left to do; and, when
-- nothing is left, take it off the work index. One script, so nothing can come in between:
-- a command submitted before it is seen by the read (the worker wakes one for it); one
-- submitted after it finds the game off the index and the nudge cleared, so its own
-- wake-up puts the game back on the index and posts it.
-- KEYS: 1 lease, 2 nudge, 3 meta hash, 4 commands stream, 5 the work index (absent on a
--       cluster, whose slots a script cannot span: the caller takes the game off itself)
-- ARGV: 1 owner token, 2 game id, 3 '1' if the game may leave the index (the worker did not
--       stop with work left)
-- Returns {meta as a flat list, the commands' last id ('0-0' for none), 1 if taken off the index}
-- (one DEL for the lease and the nudge when the lease is ours: issue #23 counts commands)
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1], KEYS[2])
else
  redis.call('DEL', KEYS[2])
end
local meta = redis.call('HGETALL', KEYS[3])
local last = redis.call('XREVRANGE', KEYS[4], '+', '-', 'COUNT', 1)
local last_id = '0-0'
if #last > 0 then last_id = last[1][1] end
local off = 0
if #KEYS >= 5 and ARGV[3] == '1' then
  -- red7es.service.folding.has_work, read from the same meta: no work when the game is
  -- broken; else work when a bot is to move in a game not over, or a command is unanswered
  -- (tests/service/test_release_look.py holds the two alike)
  local fields = {}
  for j = 1, #meta, 2 do fields[meta[j]] = meta[j + 1] end
  local work = false
  if not fields['broken'] or fields['broken'] == '' then
    work = (fields['bot_to_move'] == '1' and fields['status'] ~= 'over') or last_id ~= (fields['cursor'] or '0-0')
  end
  if not work then
    redis.call('ZREM', KEYS[5], ARGV[2])
    off = 1
  end
end
return {meta, last_id, off}
