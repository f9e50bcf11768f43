-- Compare-and-append: extend a game's log only from the version and command cursor
-- the worker folded, so two workers can never both extend a game.
-- KEYS: 1 log stream, 2 meta hash, 3 commands stream, 4 changes stream, then with a
--       hand-back (ARGV[12] or ARGV[14]) 5 lease, 6 nudge and, when ARGV[13] names the game, 7 the
--       work index; then the view keys. (A bot's command id is not written to the command
--       ids hash, which makes a client's retried submit a no-op: bots' turns are never
--       submitted or retried, and each is in the commands stream and its CommandApplied.
--       Issue #23: the HSET and the check of that key were two commands a turn.)
-- ARGV: 1 expected version, 2 expected cursor, 3 cursor after the client commands,
--       4 number of events, 5 number of bot commands, 6 new head (hex), 7 status,
--       8 seat to move ('' for none), 9 bot to move (0/1), 10 changes payload ('' for none),
--       11 now (ms), 12 the worker's lease token to hand the game back with ('' for none),
--       13 the game id when the work index is KEYS[7] ('' for none: a cluster's index is
--       in another slot), 14 the posted command's id ('' for none: see Posted, below),
--       15 the posted command's bytes as the worker answered them ('' for none),
--       then the events, then (id, bytes) per bot command, then one value per view key,
--       then, for a timed game only (RULES.md, Time; an untimed game sends none of them):
--       the seat to move's deadline ('' for none: meta.deadline), the time-out's at and
--       deadline ('' '' unless the events time a seat out), and a stream id per bot command
--       (its referee time: the next seat's clock starts from it).
-- The events go into one log entry (issue #23: an XADD each was most of a move's
-- commands): fields v (the log's event count through it), e, e1, e2, ... at an id that
-- leaves the ids below it free for its events (red7es.service.stream_entries).
-- meta.entries counts the log's entries (absent for a log of an older red7es, whose
-- entries each hold one event: meta.version counts them), meta.log_id is its last id.
-- Posted (issue #23): a worker answering the one command a client's post carried (the
-- command and the game's version came with the post, and the worker's table is at that
-- version) appends without having taken the lease or read the game: the append itself
-- checks what the read would have told. The posted command must be the first after the
-- expected cursor, with the very bytes the worker answered (a post is only a copy, and
-- whoever may write the inbox could post other bytes under a stored command's id), else
-- {0, ...}: the worker folds the game the usual way. A broken game is refused the same
-- way, and the hand-back (ARGV[12] is then '') takes the game off the index, touching
-- neither a lease the worker never held nor the nudge (a submit that puts the game back
-- on the index posts it whatever the nudge says: submit.lua). Untimed
-- games only: their bots' commands take Redis's ids ('*') and are written first, so their
-- XADD is the check that the commands stream has ids left.
-- Returns {1, version, cursor, last command id, handed back (0/1)} when appended (the
-- commands stream's last id after it, '0-0' for none: no command waits when it is the
-- cursor), {0, version, cursor} when the game moved on,
-- {2, reason} when a key cannot take the append and {3, log's entries, entries meta
-- counts} when the log is not the one meta counts: then nothing is written, and the game
-- needs a human.
local nev = tonumber(ARGV[4])
local nbot = tonumber(ARGV[5])
local owner, game, posted, posted_bytes = ARGV[12], ARGV[13], ARGV[14], ARGV[15]
local E = 16  -- the first event's ARGV
local extra = 0  -- the hand-back's keys before the views
if owner ~= '' or posted ~= '' then
  extra = 2
  if game ~= '' then extra = 3 end
end
local first_view = 5 + extra
-- A script that fails half-way keeps the writes it made before the error, so every key
-- written is checked before the first write: the right type (or none), and a stream
-- written to must have ids left for its entries. The views need no check: MSET replaces
-- whatever a key holds.
-- XINFO STREAM of a key as a table of its fields; nil for no key, or {err = ...}.
local function stream_info(key)
  local info = redis.pcall('XINFO', 'STREAM', key)
  if info['err'] then
    if string.find(tostring(info['err']), 'no such key', 1, true) then
      return nil
    end
    return info
  end
  local fields = {}
  for j = 1, #info, 2 do fields[info[j]] = info[j + 1] end
  return fields
end
-- Whether a stream whose last generated id is ``last`` has ids left for ``adding`` entries.
local function room_after(key, last, adding)
  local ms, seq = string.match(last, '^(%d+)-(%d+)$')
  if ms ~= '18446744073709551615' then
    return nil  -- a new id takes a later millisecond: there is room
  end
  -- ids left in the last millisecond, 18446744073709551615 - seq, exactly in a double
  local room = math.huge
  if #seq == 20 and string.sub(seq, 1, 5) == '18446' then
    room = 744073709551615 - tonumber(string.sub(seq, 6))
  end
  if room < adding then
    return key .. ' has room for ' .. room .. ' more entries after ' .. last .. ', not ' .. adding
  end
  return nil
end
local function wrong(key, want)
  return key .. ' is a ' .. redis.call('TYPE', key)['ok'] .. ', not a ' .. want
end
-- A stream's fields (XINFO STREAM: its length, last id and last entry in one command; nil
-- for no key) and why it cannot take ``adding`` entries (nil when it can).
local function checked_stream(key, adding)
  local info = stream_info(key)
  if info and info['err'] then
    return nil, wrong(key, 'stream')
  end
  if info then
    return info, room_after(key, info['last-generated-id'] or '', adding)
  end
  return nil, nil
end
-- The keys this script reads anyway are checked by that read (a key of another type fails
-- it: TYPE is asked only then, for the message; issue #23: the checks were most of the
-- script's commands). A missing key reads as empty. The changes stream is checked by its
-- own XADD, the script's first write (below).
local read = redis.pcall('HMGET', KEYS[2], 'version', 'cursor', 'entries', 'log_id', 'broken')
if read['err'] then
  return {2, wrong(KEYS[2], 'hash')}
end
local version, cursor = tonumber(read[1]), read[2]
-- The log: its length (XLEN) and, for the id of its next entry, its last id as the last
-- append wrote it (meta.log_id). XINFO STREAM, which says whether ids are left and what
-- the last id really is, answers its first and last entries too (an append's events
-- each): it is asked only when meta has no log_id (a game's first append, or one an older
-- red7es wrote) or when the XADD is refused (below).
local problem, length, room_checked = nil, 0, false
local last_log_id = read[4]
if last_log_id or nev == 0 then
  length = redis.pcall('XLEN', KEYS[1])
  if type(length) == 'table' then
    length, problem = 0, wrong(KEYS[1], 'stream')
  end
else
  local info
  info, problem = checked_stream(KEYS[1], nev)
  length = info and info['length'] or 0
  last_log_id = info and info['last-generated-id'] or '0-0'
  room_checked = true
end
-- The commands' last entry: with bot commands to add, from the XINFO that says whether
-- there are ids left for them; else one XREVRANGE.
local last = {}
local commands_generated = nil  -- (with bot commands to add) the commands stream's last id ever
local first_after = nil  -- (posted) the id of the first command after the expected cursor
local first_bytes = nil  -- (posted) and its bytes (its entry's field c, the last one as a reader keeps)
if not problem then
  if posted ~= '' then
    -- the first two commands after the expected cursor: the posted one, then whether
    -- another waits (its id stands for the last: it is not the new cursor either way)
    local after = {}
    if ARGV[2] ~= '18446744073709551615-18446744073709551615' then
      after = redis.pcall('XRANGE', KEYS[3], '(' .. ARGV[2], '+', 'COUNT', 2)
    end
    if after['err'] then
      problem = wrong(KEYS[3], 'stream')
    elseif #after > 0 then
      first_after = after[1][1]
      local fields = after[1][2]
      for j = 1, #fields, 2 do
        if fields[j] == 'c' then first_bytes = fields[j + 1] end
      end
      last = {after[#after]}
    end
  elseif nbot > 0 then
    local info
    info, problem = checked_stream(KEYS[3], nbot)
    if info and info['last-entry'] then last = {info['last-entry']} end
    commands_generated = info and info['last-generated-id']
  else
    last = redis.pcall('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)
    if last['err'] then
      problem = wrong(KEYS[3], 'stream')
    end
  end
end
if problem then
  return {2, problem}
end
if version == nil or version ~= tonumber(ARGV[1]) or cursor ~= ARGV[2] then
  return {0, version or -1, cursor or ''}
end
if posted ~= '' and (first_after ~= posted or first_bytes ~= posted_bytes or (read[5] and read[5] ~= '')) then
  return {0, version, cursor}  -- another command came first, other bytes were posted, or the game is broken
end
local counted = tonumber(read[3]) or version  -- (an older red7es's log: an event per entry)
if length ~= counted then
  -- entries no append counted (one that failed half-way), or entries removed (the caller
  -- counts their events, for its message: this is a damaged game, not a move)
  return {3, length, counted}
end
local last_id = '0-0'  -- the commands' last id: returned, so a folder need not read them again
if #last > 0 then last_id = last[1][1] end
cursor = ARGV[3]
if nbot > 0 and last_id ~= cursor then
  -- a bot may only move once every command submitted before it has been answered
  return {0, version, ARGV[2]}
end
-- A timed game's referee time is Redis's (docs/architecture.md, Clocks): what the worker
-- says a time-out or a bot's turn happened at must be past, and a time-out must come
-- after every command at or before its deadline (and before any answered after it).
local timed = E + nev + 2 * nbot + (#KEYS - first_view + 1)
local time_ms = nil  -- Redis's TIME in ms, read once
local function redis_ms()
  if not time_ms then
    local clock = redis.call('TIME')
    time_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
  end
  return time_ms
end
-- The millisecond the log's entry goes in: Redis's, read once. An untimed game's append
-- takes it from the id Redis gave the change it wrote first (XADD '*': Redis's clock, or
-- just past the changes' last id should that be ahead of it), not from a TIME of its own
-- (issue #23: one command a turn).
local change_ms = nil
local function log_ms()
  return time_ms or change_ms or redis_ms()
end
local bot_ids = {}
local deadline = nil
if #ARGV >= timed + 2 then
  local now = redis_ms()
  if ARGV[timed + 1] ~= '' then
    local at, due = tonumber(ARGV[timed + 1]), tonumber(ARGV[timed + 2])
    if at > now or at <= due then
      return {0, version, ARGV[2]}
    end
    local later = {}
    if ARGV[3] ~= '18446744073709551615-18446744073709551615' then  -- (nothing follows the last id)
      later = redis.call('XRANGE', KEYS[3], '(' .. ARGV[3], '+', 'COUNT', 1)
    end
    if #later > 0 and tonumber(string.match(later[1][1], '^(%d+)-')) < at then
      return {0, version, ARGV[2]}  -- a command came in before the time-out: answer it first
    end
  end
  -- each bot command's id after the last: the cursor's, or past it the stream's last id
  -- ever (an entry submit.lua deleted again, a duplicate's, leaves its id used)
  local top_ms, top_seq = string.match(commands_generated or cursor, '^(%d+)-(%d+)$')
  top_ms, top_seq = tonumber(top_ms), tonumber(top_seq)
  for b = 1, nbot do
    local id = ARGV[timed + 2 + b]
    local ms, seq = string.match(id or '', '^(%d+)-(%d+)$')
    ms, seq = tonumber(ms), tonumber(seq)
    if ms == nil or ms > now or ms < top_ms or (ms == top_ms and seq <= top_seq) then
      return {0, version, ARGV[2]}
    end
    top_ms, top_seq = ms, seq
    bot_ids[b] = id
  end
  deadline = ARGV[timed]
end
-- The bots' commands (ARGV from i: id, bytes); the new cursor is the last one's id.
local i = E + nev
local bot_written = {}
local function write_bots()
  for b = 1, nbot do
    local id = redis.pcall('XADD', KEYS[3], bot_ids[b] or '*', 'c', ARGV[i + 1])
    if type(id) == 'table' and id['err'] then
      return id['err']
    end
    bot_written[#bot_written + 1] = id
    cursor = id
    i = i + 2  -- (ARGV[i] is the bot command's id: not stored, see KEYS)
  end
  return nil
end
local function take_back_bots()  -- (a later write refused: the append writes nothing)
  for _, id in ipairs(bot_written) do redis.call('XDEL', KEYS[3], id) end
end
if posted ~= '' and nbot > 0 then
  -- Posted: the bots' commands are the first write (see Posted); a stream that has no
  -- ids left refuses the first of them, with nothing written yet.
  local err = write_bots()
  if err then
    take_back_bots()
    local _, why = checked_stream(KEYS[3], nbot)
    return {2, why or (KEYS[3] .. ': ' .. err)}
  end
end
local change = nil
if ARGV[10] ~= '' then
  -- The first write (but a posted append's bots'): it fails (another type, or no ids
  -- left) with nothing else written yet.
  change = redis.pcall('XADD', KEYS[4], '*', 'v', version + nev, 'p', ARGV[10])
  if type(change) == 'table' and change['err'] then
    take_back_bots()
    local _, why = checked_stream(KEYS[4], 1)
    return {2, why or (KEYS[4] .. ': ' .. change['err'])}
  end
  local ms = string.match(change, '^(%d+)-')
  if #ms <= 15 then change_ms = tonumber(ms) end  -- (a double holds it exactly)
end
-- The log's entries, after a last id ``last``: the last one's id (or XADD's error) and
-- how many were written, or false when no id can be chosen without knowing the stream has
-- room (the caller then reads it). One event takes Redis's own id ('*'); several take
-- consecutive ids in Redis's millisecond, the entry the last one's. Past a log id above
-- Redis's clock (set by hand, or a clock gone back) each event is an entry of its own
-- under an id of Redis's, once the room for them is known.
local function write_log(last, room_known)
  if nev == 1 then
    return redis.pcall('XADD', KEYS[1], '*', 'v', version + 1, 'e', ARGV[E]), 1
  end
  local now = log_ms()
  local ms, seq = string.match(last, '^(%d+)-(%d+)$')
  local first = nil  -- the first event's sequence number in millisecond ``now``
  if ms and #ms <= 15 and tonumber(ms) < now then
    first = 0
  elseif ms and #ms <= 15 and tonumber(ms) == now and #seq <= 15 then
    first = tonumber(seq) + 1
  end
  if first then
    -- at most 1,000 events an entry: a Lua unpack holds at most 8,000 values, and an error
    -- there would come after the change was written (an append this large is a batch of
    -- 200 commands and more; the entries' ids still follow on, so only the first XADD can
    -- be refused)
    local done, written, entries = 0, nil, 0
    while done < nev do
      local size = math.min(1000, nev - done)
      local fields = {'v', version + done + size, 'e', ARGV[E + done]}
      for j = 1, size - 1 do
        fields[#fields + 1] = 'e' .. j
        fields[#fields + 1] = ARGV[E + done + j]
      end
      written = redis.pcall('XADD', KEYS[1], string.format('%.0f-%.0f', now, first + done + size - 1), unpack(fields))
      if type(written) == 'table' and written['err'] then
        return written, entries
      end
      done, entries = done + size, entries + 1
    end
    return written, entries
  end
  if not room_known then
    return false, 0
  end
  local id = nil
  for j = 1, nev do
    id = redis.call('XADD', KEYS[1], '*', 'v', version + j, 'e', ARGV[E - 1 + j])
  end
  return id, nev
end
if nev > 0 then
  local written, added = write_log(last_log_id, room_checked)
  if not written or (type(written) == 'table' and written['err']) then
    -- meta.log_id is not the log's last id (an XSETID by hand), or no ids are left: the
    -- stream tells which, and the change above is taken back if nothing can be written
    local info, why = checked_stream(KEYS[1], nev)
    if not why then
      written, added = write_log(info and info['last-generated-id'] or '0-0', true)
      if type(written) == 'table' and written['err'] then
        why = KEYS[1] .. ': ' .. written['err']
      end
    end
    if why then
      if change then redis.call('XDEL', KEYS[4], change) end
      take_back_bots()
      return {2, why}
    end
  end
  last_log_id, length = written, length + added
end
if posted == '' then
  local err = write_bots()  -- (their room was checked above, with the commands' XINFO)
  if err then error(KEYS[3] .. ': ' .. err) end
end
version = version + nev
local meta = {'version', version, 'cursor', cursor, 'head', ARGV[6], 'status', ARGV[7], 'to_move', ARGV[8],
              'bot_to_move', ARGV[9], 'updated', ARGV[11], 'entries', length}
if last_log_id then
  meta[#meta + 1] = 'log_id'
  meta[#meta + 1] = last_log_id
end
if deadline then
  meta[#meta + 1] = 'deadline'
  meta[#meta + 1] = deadline
end
if change then
  -- the changes' last id, for a client's submit to answer as its mark (submit.lua)
  meta[#meta + 1] = 'change_id'
  meta[#meta + 1] = change
end
redis.call('HSET', KEYS[2], unpack(meta))
-- every view in one MSET (issue #23: a SET each was three commands a turn; the keys share
-- the game's hash tag, so a cluster takes it too)
if #KEYS >= first_view then
  local pairs = {}
  for k = first_view, #KEYS do
    pairs[#pairs + 1] = KEYS[k]
    pairs[#pairs + 1] = ARGV[i]
    i = i + 1
  end
  redis.call('MSET', unpack(pairs))
end
if nbot > 0 then last_id = cursor end  -- (the last bot command added)
-- The hand-back (issue #23: release_look.lua's work, in the append that ends a fold): when
-- nothing is left to do (no command waits after the new cursor, no bot is to move) in a
-- game not over (the worker finishing a game keeps it, and its work index entry, until it
-- has forgotten the seed and scheduled the compaction: killed first, the sweep finds it), release
-- the worker's lease, clear the nudge and take the game off the work index, as
-- release_look.lua does; in the same atomic step as the append, so a command submitted
-- before it is seen here (nothing is handed back: the worker folds on) and one submitted
-- after finds the game off the index (and the nudge cleared) and wakes a worker itself. Errors of these keys (written by
-- hand) cannot undo the append: a lease of another type is not ours, an index refused is
-- the sweep's to find (as a worker's add that is refused).
-- A posted append (no lease) that ends the game hands it back too, but for the index
-- entry: its worker's finishing takes it off (GameStore.finish), and, killed first, leaves
-- it for the sweep to finish.
local handed = 0
local over = ARGV[7] == 'over'
if (owner ~= '' or posted ~= '') and last_id == cursor and ARGV[9] == '0' and (not over or posted ~= '') then
  -- (posted: no lease was taken, and the nudge is left: a client's submit that adds the
  -- game to the index posts it whatever the nudge says, submit.lua)
  if posted == '' then
    if redis.pcall('GET', KEYS[5]) == owner then
      redis.call('DEL', KEYS[5], KEYS[6])
    else
      redis.call('DEL', KEYS[6])
    end
  end
  if game ~= '' and not over then
    redis.pcall('ZREM', KEYS[7], game)
  end
  handed = 1
end
return {1, version, cursor, last_id, handed}
