-- Remove a lease that never expires, or not within a worker's lease: a worker's always does,
-- so this one was written by hand, and would keep every worker off the game for ever.
-- KEYS: 1 lease key; ARGV: 1 the holder the sweep read, 2 the longest a worker's lease lasts (ms)
-- Returns 1 when removed, 0 when the lease is another one by now, or fine.
if redis.call('TYPE', KEYS[1])['ok'] ~= 'string' or redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local left = redis.call('PTTL', KEYS[1])
if left == -1 or left > tonumber(ARGV[2]) then
  return redis.call('DEL', KEYS[1])
end
return 0
