-- Set a game's nudge and, only if this call set it, post the game to the workers' inbox:
-- whoever sets the nudge wakes a worker, in the same atomic step (issue #23: a person's
-- turn paid a round trip for each; a client killed between the two left a nudge with no
-- post, for the sweep to find). The keys are in two slots: a standalone Redis only.
-- KEYS: 1 nudge, 2 workers' inbox
-- ARGV: 1 nudge time to live (ms), 2 game id, 3 the inbox's approximate length cap
-- Returns 1 when this call set the nudge and posted the game, 0 when the nudge was set already.
if not redis.call('SET', KEYS[1], 1, 'NX', 'PX', ARGV[1]) then
  return 0
end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'g', ARGV[2])
return 1
