-- Read a game's commands for a worker, bounded in bytes: anyone who may submit must not
-- be able to fill a worker's memory (docs/architecture.md, Oversized commands).
-- KEYS: 1 commands stream, 2 (optional) meta hash, read in the same atomic step
-- ARGV: 1 first stream id to read (inclusive, as XRANGE's start; '' reads no command),
--       2 most commands, 3 largest command returned whole (bytes),
--       4 bytes of commands after which no further command is read
-- Returns {meta as HGETALL gives it ({} without KEYS[2]), {id, command, id, command, ...}}:
-- a command is its entry's field c ('' if it has none) or, when that is larger than ARGV[3],
-- its size as an integer: its bytes stay in Redis, and the worker answers it as corrupt.
-- Entries are read one at a time (XRANGE COUNT 1), so the script holds one at once.
local meta = {}
if KEYS[2] then
  meta = redis.call('HGETALL', KEYS[2])
end
local rows = {}
local start, left = ARGV[1], tonumber(ARGV[2])
local limit, budget, held = tonumber(ARGV[3]), tonumber(ARGV[4]), 0
while start ~= '' and left > 0 and held < budget do
  local entry = redis.call('XRANGE', KEYS[1], start, '+', 'COUNT', 1)[1]
  if not entry then
    break
  end
  local id, fields, command = entry[1], entry[2], ''
  for i = 1, #fields, 2 do
    if fields[i] == 'c' then
      command = fields[i + 1] -- the last one, as a client reading the entry as a map keeps
    end
  end
  rows[#rows + 1] = id
  if #command > limit then
    rows[#rows + 1] = #command
  else
    rows[#rows + 1] = command
    held = held + #command
  end
  if id == '18446744073709551615-18446744073709551615' then
    break -- the largest stream id: nothing can follow it (and XRANGE refuses to look)
  end
  start = '(' .. id
  left = left - 1
end
return {meta, rows}
