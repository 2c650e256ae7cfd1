// The one Lua script behind RedisLimitStore: checks and takes every bucket of a reserve in one atomic step on the
// Redis server (or applies an adjustment), timed by the server's own clock. It repeats gcra.ts and daily.ts in Lua.

/** How many ARGV entries each bucket takes after the mode (see {@link LIMIT_SCRIPT}). */
export const ARGUMENTS_PER_BUCKET = 5;

/**
 * KEYS[i]: the counter of bucket i (a hash {at, backlog} for a window, a number for a day).
 * ARGV[1]: "reserve" or "adjust". Then per bucket: kind ("window" | "daily"), limit, windowMs (window) or the UNIX
 * second the day's counter expires (daily), cost (reserve) or delta (adjust), and the seed ("" when none is known).
 *
 * Replies, with numbers that matter as strings (Redis would truncate a Lua number to an integer):
 * - {"seed", i, ...}: reserve only; the daily counters i (1-based) are absent and no seed was given; nothing changed.
 * - {"admitted" | "refused", nowMs, value_1, fits_1, ...}: value is the backlog in ms (window) or the day's use,
 *   after the reserve when admitted, untouched when refused; fits is 1 or 0.
 * - {"adjusted"}.
 *
 * NOTE: time is the server's TIME in microseconds (1.7e15, exact in a double), so every loom process shares one
 * clock; `at` is kept in microseconds and the backlog in ms, as gcra.ts explains. Redis 5+ replicates a script by
 * its effects, so reading TIME before writing is allowed.
 */
export const LIMIT_SCRIPT = `
local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local mode = ARGV[1]
local count = #KEYS
local function arg(i, j) return ARGV[1 + (i - 1) * ${ARGUMENTS_PER_BUCKET} + j] end
local function number(value) return string.format('%.17g', value) end

-- tat - now in ms (never negative); a clock that went back counts as no time passed.
local function backlogOf(i)
  local stored = redis.call('HMGET', KEYS[i], 'at', 'backlog')
  if not (stored[1] and stored[2]) then return 0 end
  return math.max(0, tonumber(stored[2]) - math.max(0, nowUs - tonumber(stored[1])) / 1000)
end
local function writeWindow(i, backlog)
  if backlog <= 0 then
    redis.call('DEL', KEYS[i])
    return
  end
  local stored = redis.call('HGET', KEYS[i], 'at')
  local at = nowUs
  if stored then at = math.max(nowUs, tonumber(stored)) end
  redis.call('HSET', KEYS[i], 'at', number(at), 'backlog', number(backlog))
  redis.call('PEXPIRE', KEYS[i], math.max(1, math.ceil(backlog + (at - nowUs) / 1000)))
end
local function writeDay(i, used)
  redis.call('SET', KEYS[i], number(used))
  redis.call('EXPIREAT', KEYS[i], tonumber(arg(i, 3)))
end
-- units * T, with T = windowMs / limit
local function emission(i, units) return units * tonumber(arg(i, 3)) / tonumber(arg(i, 2)) end

if mode == 'adjust' then
  -- One bucket at a time, reading what an earlier adjustment of the same key in this call wrote.
  for i = 1, count do
    local delta = tonumber(arg(i, 4))
    if arg(i, 1) == 'window' then
      writeWindow(i, math.max(0, backlogOf(i) + emission(i, delta)))
    else
      local used = redis.call('GET', KEYS[i])
      if used then writeDay(i, math.max(0, tonumber(used) + delta)) end
    end
  end
  return {'adjusted'}
end

local values, fits, seeded, missing = {}, {}, {}, {}
for i = 1, count do
  if arg(i, 1) == 'window' then
    values[i] = backlogOf(i)
  else
    local used = redis.call('GET', KEYS[i])
    if used then
      values[i] = tonumber(used)
    elseif arg(i, 5) ~= '' then
      values[i] = tonumber(arg(i, 5))
      seeded[i] = true
    else
      missing[#missing + 1] = i
    end
  end
end
if #missing > 0 then
  return {'seed', unpack(missing)}
end

local admitted = true
for i = 1, count do
  local cost = tonumber(arg(i, 4))
  if arg(i, 1) == 'window' then
    local windowMs = tonumber(arg(i, 3))
    fits[i] = values[i] + emission(i, cost) <= windowMs * (1 + 1e-9)
  else
    fits[i] = values[i] + cost <= tonumber(arg(i, 2))
  end
  if not fits[i] then admitted = false end
end

local reply = {'refused', number(nowUs / 1000)}
if admitted then reply[1] = 'admitted' end
for i = 1, count do
  if admitted then
    if arg(i, 1) == 'window' then
      values[i] = values[i] + emission(i, tonumber(arg(i, 4)))
      writeWindow(i, values[i])
    else
      values[i] = values[i] + tonumber(arg(i, 4))
      writeDay(i, values[i])
    end
  elseif seeded[i] then
    -- Refused, but a day's first seed is kept all the same, so no process reads it again.
    writeDay(i, values[i])
  end
  reply[#reply + 1] = number(values[i])
  reply[#reply + 1] = fits[i] and 1 or 0
end
return reply
`;
