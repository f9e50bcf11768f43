-- Read a game's commands for a worker, bounded in bytes: anyone who may submit must not
-- be able to fill a worker's memory (docs/architecture.md, Oversized commands).
-- KEYS: 1 commands stream, 2 (optional) meta hash, read in the same atomic step
-- ARGV: 1 first stream id to read (inclusive, as XRANGE's start; '' reads no command),
--       2 most commands, 3 largest command returned whole (bytes),
--       4 bytes of commands after which no further command is read
-- Returns {meta as HGETALL gives it ({} without KEYS[2]), {id, command, id, command, ...}}:
-- a command is its entry's field c ('' if it has none) or, when that is larger than ARGV[3],
-- its size as an integer: its bytes stay in Redis, and the worker answers it as corrupt.
-- Entries are read two at a time (XRANGE COUNT 2), so the script holds two at once: a read
-- that finds one command (a person's turn) learns from the same XRANGE that no other
-- follows it (issue #23: one at a time cost a second, empty, XRANGE every turn).
local meta = {}
if KEYS[2] then
  meta = redis.call('HGETALL', KEYS[2])
end
local rows = {}
local start, left = ARGV[1], tonumber(ARGV[2])
local limit, budget, held = tonumber(ARGV[3]), tonumber(ARGV[4]), 0
while start ~= '' and left > 0 and held < budget do
  local asked = math.min(2, left)
  local entries = redis.call('XRANGE', KEYS[1], start, '+', 'COUNT', asked)
  for _, entry in ipairs(entries) do
    if left == 0 or held >= budget then
      start = ''
      break -- (the second entry of this read is read again by the next call)
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
    left = left - 1
    if id == '18446744073709551615-18446744073709551615' then
      start = '' -- the largest stream id: nothing can follow it (and XRANGE refuses to look)
    else
      start = '(' .. id
    end
  end
  if #entries < asked then
    break -- the stream has nothing more after start
  end
end
return {meta, rows}
