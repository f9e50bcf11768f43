-- Extend a lease only if it is still ours.
-- KEYS: 1 lease key; ARGV: 1 owner token, 2 milliseconds
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
