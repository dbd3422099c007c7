-- Units of scenario values: durations, sizes and rates written as strings.
--
--   duration: "250ms", "90s", "5m", "2h", "7d", "2w", "3y" (y = 365 d), also "us", "ns";
--             a plain number is seconds
--   size:     "80GB" (10^9 bytes, as datasheets count), "80GiB" (2^30), B KB MB GB TB PB,
--             KiB MiB GiB TiB PiB; a plain number is bytes
--   rate:     "5/s", "300/min", "1800/h", "40/d"; a plain number is per second
--   bandwidth: a size per second, "50GB/s", "400MiB/s"; a plain number is bytes per second
--
-- Each parser returns the value in base units (seconds, bytes, per second), or nil and
-- a message saying what was expected.

local units = {}

-- Each unit is a multiplier, or { div = n } for sub-units, so that "250ms" is exactly
-- 250 / 1000 rather than 250 * 0.001.
local DURATION = {
  ns = { div = 1e9 }, us = { div = 1e6 }, ms = { div = 1e3 }, s = 1, m = 60, min = 60,
  h = 3600, d = 86400, w = 7 * 86400, y = 365 * 86400,
}

local SIZE = {
  B = 1, KB = 1e3, MB = 1e6, GB = 1e9, TB = 1e12, PB = 1e15,
  KiB = 2 ^ 10, MiB = 2 ^ 20, GiB = 2 ^ 30, TiB = 2 ^ 40, PiB = 2 ^ 50,
}

local RATE_PER = { s = 1, sec = 1, min = 60, m = 60, h = 3600, hour = 3600, d = 86400, day = 86400 }

local function unit_list(t, prefix)
  local names = {}
  for name in pairs(t) do names[#names + 1] = (prefix or "") .. name end
  table.sort(names)
  return table.concat(names, ", ")
end

-- Parses "<number><unit>" against a table of units; a plain number passes unchanged.
-- noun and example shape the messages ("duration", "\"250ms\" or \"2h\"").
local function scaled(v, table_of_units, noun, base, example)
  if type(v) == "number" then return v end
  if type(v) ~= "string" then
    return nil, ("expected a %s (%s, or a string such as %s), got %s"):format(noun, base, example, type(v))
  end
  local number, unit = v:match("^%s*([%d%.eE%+%-]+)%s*(%a*)%s*$")
  local value = number and tonumber(number)
  if not value then
    return nil, ("expected a %s such as %s, got %q"):format(noun, example, v)
  end
  if unit == "" then return value end
  local u = table_of_units[unit]
  if not u then
    return nil, ("unknown %s unit %q in %q (known: %s)"):format(noun, unit, v, unit_list(table_of_units))
  end
  return type(u) == "table" and value / u.div or value * u
end

function units.duration(v)
  return scaled(v, DURATION, "duration", "seconds", "\"250ms\" or \"2h\"")
end

function units.size(v)
  return scaled(v, SIZE, "size", "bytes", "\"80GB\"")
end

function units.rate(v)
  if type(v) == "number" then return v end
  if type(v) ~= "string" then
    return nil, ("expected a rate (per second, or a string such as \"300/min\"), got %s"):format(type(v))
  end
  local number, per = v:match("^%s*([%d%.eE%+%-]+)%s*/%s*(%a+)%s*$")
  local value = number and tonumber(number)
  if not value then
    value = tonumber(v)
    if value then return value end
    return nil, ("expected a rate such as 5, \"5/s\" or \"300/min\", got %q"):format(v)
  end
  local seconds = RATE_PER[per]
  if not seconds then
    return nil, ("unknown rate unit %q in %q (known: %s)"):format(per, v, unit_list(RATE_PER, "/"))
  end
  return value / seconds
end

function units.bandwidth(v)
  if type(v) == "number" then return v end
  if type(v) ~= "string" then
    return nil, ("expected a bandwidth (bytes per second, or a string such as \"50GB/s\"), got %s"):format(type(v))
  end
  local size = v:match("^%s*(.-)%s*/%s*s%s*$")
  if not size then
    return nil, ("expected a bandwidth such as \"50GB/s\", got %q"):format(v)
  end
  local bytes, err = units.size(size)
  if not bytes then return nil, err end
  return bytes
end

return units
