/* libFuzzer harness: the unit parser (lua/fleetsim/units.lua through the sandbox, and the
 * loader's checks of its results in lua/fields.c).
 *
 * The input, as one string, goes to units.duration, units.size and units.rate and to
 * fs.seconds, fs.bytes and fs.per_second in a sandbox made once; each must return a
 * number or nil and a message (or raise a Lua error), never crash.  Then it goes
 * through the loader as --set values of a small scenario: duration, bucket, a rate, a
 * distribution's mean. */
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/sandbox.h"
#include "lua/scenario_load.h"
#include "tests/fuzz/fuzz_support.h"

static const char scenario_text[] =
    "local fs = require 'fleetsim'\n"
    "return fs.scenario {\n"
    "  duration = '1h', bucket = '10m',\n"
    "  pools = { q = fs.dedicated { count = 2 } },\n"
    "  workloads = { w = fs.service { arrivals = fs.poisson { rate = '60/min' },\n"
    "    service = fs.exponential { mean = '1s' }, pool = 'q' } },\n"
    "}\n";
static const char checks[] =
    "local s = ...\n"
    "local units = require 'fleetsim.units'\n"
    "local fs = require 'fleetsim'\n"
    "for _, parse in ipairs { units.duration, units.size, units.rate } do\n"
    "  local v, why = parse(s)\n"
    "  assert(type(v) == 'number' or (v == nil and type(why) == 'string'))\n"
    "end\n"
    "for _, f in ipairs { fs.seconds, fs.bytes, fs.per_second } do pcall(f, s) end\n";

static sandbox *sb;
static const char *scenario_path;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static char path[512];
    strcpy(path, fuzz_write("units.lua", (const uint8_t *)scenario_text,
                            sizeof scenario_text - 1));
    scenario_path = path;
    sb = sandbox_create(false);
    return sb ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 200)
        return 0; /* a unit string is short; long ones only slow the search */
    lua_State *L = sandbox_state(sb);
    sandbox_set_instruction_budget(sb, 1000000);
    if (luaL_loadbufferx(L, checks, sizeof checks - 1, "=checks", "t") != LUA_OK)
        __builtin_trap();
    lua_pushlstring(L, (const char *)data, size);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        const char *why = lua_tostring(L, -1);
        if (why && strstr(why, "assertion failed"))
            __builtin_trap(); /* a parser returned something else than documented */
        lua_pop(L, 1);
    }
    lua_settop(L, 0);
    lua_gc(L, LUA_GCCOLLECT);

    if (memchr(data, '\0', size))
        return 0;
    char value[256];
    memcpy(value, data, size);
    value[size] = '\0';
    static const char *const keys[] = { "duration=", "bucket=",
        "workloads.w.arrivals.rate=", "workloads.w.service.mean=" };
    char text[4][300];
    const char *sets[4];
    for (int i = 0; i < 4; i++) {
        snprintf(text[i], sizeof text[i], "%s%s", keys[i], value);
        sets[i] = text[i];
    }
    char err[2048];
    for (size_t i = 0; i < 4; i++) {
        scenario_load_options options = { .sets = &sets[i], .nsets = 1 };
        scenario sc;
        if (scenario_load(scenario_path, &options, &sc, err, sizeof err) == 0)
            scenario_release(&sc);
    }
    return 0;
}
