-- Compare-and-append: extend a game's log only from the version and command cursor
-- the worker folded, so two workers can never both extend a game.
-- KEYS: 1 log stream, 2 meta hash, 3 commands stream, 4 command ids hash,
--       5 changes stream, 6.. view keys
-- ARGV: 1 expected version, 2 expected cursor, 3 cursor after the client commands,
--       4 number of events, 5 number of bot commands, 6 new head (hex), 7 status,
--       8 seat to move ('' for none), 9 bot to move (0/1), 10 changes payload ('' for none),
--       11 now (ms), then the events, then (id, bytes) per bot command, then one value per view key
local version = tonumber(redis.call('HGET', KEYS[2], 'version'))
local cursor = redis.call('HGET', KEYS[2], 'cursor')
if version == nil or version ~= tonumber(ARGV[1]) or cursor ~= ARGV[2] then
  return {0, version or -1, cursor or ''}
end
local nev = tonumber(ARGV[4])
local nbot = tonumber(ARGV[5])
cursor = ARGV[3]
if nbot > 0 then
  -- a bot may only move once every command submitted before it has been answered
  local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)
  local last_id = '0-0'
  if #last > 0 then last_id = last[1][1] end
  if last_id ~= cursor then
    return {0, version, ARGV[2]}
  end
end
local i = 12
for _ = 1, nev do
  redis.call('XADD', KEYS[1], '*', 'e', ARGV[i])
  i = i + 1
end
for _ = 1, nbot do
  cursor = redis.call('XADD', KEYS[3], '*', 'c', ARGV[i + 1])
  redis.call('HSET', KEYS[4], ARGV[i], cursor)
  i = i + 2
end
version = version + nev
redis.call('HSET', KEYS[2], 'version', version, 'cursor', cursor, 'head', ARGV[6], 'status', ARGV[7],
           'to_move', ARGV[8], 'bot_to_move', ARGV[9], 'updated', ARGV[11])
for k = 6, #KEYS do
  redis.call('SET', KEYS[k], ARGV[i])
  i = i + 1
end
if ARGV[10] ~= '' then
  redis.call('XADD', KEYS[5], '*', 'v', version, 'p', ARGV[10])
end
return {1, version, cursor}
