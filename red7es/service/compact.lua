-- Compact a finished game (red7es.service.compaction): keep its changes from the one
-- holding GameOver on, drop its bots' command ids, and give its streams back the room
-- Redis keeps for appends.
-- KEYS: 1 changes stream, 2 command ids hash, 3 log stream, 4 commands stream, 5 meta hash
-- ARGV: 1 the first change id to keep ('' to keep every change), then the bots' command ids
-- Returns {changes removed, command ids removed, streams repacked}; {0, 0, 0} for a game
-- that is not over (its bots may still move, and its watchers need every change).
if redis.call('HGET', KEYS[5], 'status') ~= 'over' then
  return {0, 0, 0}
end
local removed = 0
if ARGV[1] ~= '' then
  -- XTRIM only marks entries deleted inside a stream's nodes, which keep them until every
  -- entry of the node is gone: so the changes kept are written again, under their own ids,
  -- into a new stream (its last id, hence every later id, stays the same).
  local rows = redis.call('XRANGE', KEYS[1], ARGV[1], '+')
  local length = redis.call('XLEN', KEYS[1])
  if #rows > 0 and #rows < length then
    removed = length - #rows
    redis.call('DEL', KEYS[1])
    for _, row in ipairs(rows) do
      redis.call('XADD', KEYS[1], row[1], unpack(row[2]))
    end
  end
end
local dropped = 0
if #ARGV > 1 then
  dropped = redis.call('HDEL', KEYS[2], unpack(ARGV, 2))
end
-- A stream's last node is allocated 4 KB ahead for the entries to come; a finished game's
-- streams take (next to) none, and DUMP then RESTORE writes each node at its exact size.
-- RESTORE REPLACE swaps the key whole or, refused (a user without @dangerous), not at all;
-- either refused leaves the stream as it was, only bigger.
local repacked = 0
for _, key in ipairs({KEYS[1], KEYS[3], KEYS[4]}) do
  if redis.call('TYPE', key)['ok'] == 'stream' then
    local dump = redis.pcall('DUMP', key)
    if type(dump) == 'string' then
      local done = redis.pcall('RESTORE', key, 0, dump, 'REPLACE')
      if type(done) ~= 'table' then repacked = repacked + 1 end
    end
  end
end
return {removed, dropped, repacked}
