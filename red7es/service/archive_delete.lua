-- Delete an archived game's keys (red7es.service.archive), once its record file is on disk
-- and its stub written, and only if the game is still what was written: over, at the
-- version and head of the record.  Otherwise nothing is deleted.
-- KEYS: 1 meta hash, then every other key of the game
-- ARGV: 1 the record's version, 2 the record's head (hex)
-- Returns 1 when deleted, 0 when the game changed (or is gone).
local meta = redis.call('HMGET', KEYS[1], 'status', 'version', 'head')
if meta[1] ~= 'over' or meta[2] ~= ARGV[1] or meta[3] ~= ARGV[2] then
  return 0
end
redis.call('DEL', unpack(KEYS))
return 1
