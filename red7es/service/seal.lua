-- Seal a finished game's log (red7es.service.sealing): its entries, already read and
-- checked by the worker, go into one string key and the stream is deleted, together.
-- KEYS: 1 log stream, 2 meta hash, 3 the seal (a string), 4 commands stream, 5 lease
-- ARGV: 1 the log's length when it was read, 2 its last entry's id, 3 the seal
-- Returns 1 when sealed, 0 when not: the game is not over, a worker holds its lease, a
-- command waits for its answer (the log may still grow), it is sealed already, or the
-- log is not the one read (another length or last id).
if redis.call('HGET', KEYS[2], 'status') ~= 'over' then
  return 0
end
if redis.call('EXISTS', KEYS[5]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then
  return 0
end
local cursor = redis.call('HGET', KEYS[2], 'cursor') or '0-0'
local last = redis.call('XREVRANGE', KEYS[4], '+', '-', 'COUNT', 1)
if #last > 0 and last[1][1] ~= cursor then
  return 0
end
if redis.call('XLEN', KEYS[1]) ~= tonumber(ARGV[1]) then
  return 0
end
local tail = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #tail == 0 or tail[1][1] ~= ARGV[2] then
  return 0
end
redis.call('SET', KEYS[3], ARGV[3])
redis.call('DEL', KEYS[1])
return 1
