-- Create a game: store its secret seed and its first command, once.
-- KEYS: 1 commands stream, 2 meta hash, 3 secret hash, 4 command ids hash,
--       5 (optional, a standalone Redis) the archived games' hash, red7:archived
-- ARGV: 1 command id, 2 command bytes, 3 seed (hex), 4 created (ms), 5 genesis head (hex),
--       6 (with KEYS[5]) the game id
-- A command larger than any referee reads would only break the game: refused, unread.
if #ARGV[2] > 16384 then
  return redis.error_reply('a command is at most 16384 bytes; this one is ' .. #ARGV[2])
end
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[1]) == 1 then
  return false
end
-- An archived game's id stays taken: its keys are gone, but its record is still the game
-- of that id, and its public turns are signed for that id (a game made again under it
-- would take them). `red7 archive` writes the stub before it deletes the keys, so at every
-- instant one of the checks finds the game.
if KEYS[5] and redis.call('HEXISTS', KEYS[5], ARGV[6]) == 1 then
  return false
end
-- A script that fails half-way keeps what it wrote: a key left under the id that HSET
-- cannot write would leave the command without its meta (an id taken by no game).
for _, key in ipairs({KEYS[3], KEYS[4]}) do
  local kind = redis.call('TYPE', key)['ok']
  if kind ~= 'none' and kind ~= 'hash' then
    return redis.error_reply(key .. ' is a ' .. kind .. ', not a hash: the game was not created')
  end
end
redis.call('HSET', KEYS[3], 'seed', ARGV[3])
local id = redis.call('XADD', KEYS[1], '*', 'c', ARGV[2])
redis.call('HSET', KEYS[4], ARGV[1], id)
redis.call('HSET', KEYS[2], 'version', 0, 'cursor', '0-0', 'head', ARGV[5], 'status', 'new',
           'created', ARGV[4], 'to_move', '', 'bot_to_move', 0)
return id
