-- Append a client command exactly once per command id.
-- KEYS: 1 commands stream, 2 command ids hash, 3 meta hash
-- ARGV: 1 command id, 2 command bytes
-- Returns {1, stream id} when appended, {2, stream id} for a duplicate, {0, ''} for no such game,
-- {3, ''} for an id reserved for bots' turns (only workers write those, with append.lua),
-- {4, ''} for a game that is over (its record is complete: nothing more is added to it).
if redis.call('EXISTS', KEYS[3]) == 0 then
  return {0, ''}
end
if string.sub(ARGV[1], 1, 4) == 'bot-' then
  return {3, ''}
end
local existing = redis.call('HGET', KEYS[2], ARGV[1])
if existing then
  return {2, existing}
end
if redis.call('HGET', KEYS[3], 'status') == 'over' then
  return {4, ''}
end
local id = redis.call('XADD', KEYS[1], '*', 'c', ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], id)
return {1, id}
