/* The scenario sandbox: each way out is closed, limits hold, and --unsafe opens them. */
#include <criterion/criterion.h>
#include <lauxlib.h>
#include <string.h>

#include "lua/sandbox.h"
#include "support/cli.h"
#include "support/scratch.h"

static sandbox *sb;
static lua_State *L;

static void setup(void)
{
    sb = sandbox_create(false);
    L = sandbox_state(sb);
}
static void teardown(void) { sandbox_free(sb); }

TestSuite(sandbox, .init = setup, .fini = teardown);

/* Runs code; returns the Lua status and leaves the result or message on the stack. */
static int run(const char *code)
{
    int status = luaL_loadstring(L, code);
    if (status == LUA_OK)
        status = lua_pcall(L, 0, 1, 0);
    return status;
}

static void expect_error_containing(const char *code, const char *fragment)
{
    int status = run(code);
    cr_expect_neq(status, LUA_OK, "%s succeeded", code);
    const char *message = lua_tostring(L, -1);
    cr_expect(message && strstr(message, fragment), "%s: message '%s' lacks '%s'", code,
              message ? message : "(none)", fragment);
    lua_pop(L, 1);
}

Test(sandbox, no_processes) { expect_error_containing("os.execute('touch /tmp/x')", "global 'os'"); }
Test(sandbox, no_popen) { expect_error_containing("io.popen('ls')", "global 'io'"); }
Test(sandbox, no_file_writes) { expect_error_containing("io.open('/tmp/x', 'w')", "global 'io'"); }
Test(sandbox, no_dofile) { expect_error_containing("dofile('/etc/passwd')", "global 'dofile'"); }
Test(sandbox, no_loadfile) { expect_error_containing("loadfile('/etc/passwd')", "global 'loadfile'"); }
Test(sandbox, no_debug_library) { expect_error_containing("debug.getregistry()", "global 'debug'"); }
Test(sandbox, no_package_loadlib) { expect_error_containing("package.loadlib('libc.so.6', 'system')", "global 'package'"); }

Test(sandbox, no_c_modules_through_require)
{
    expect_error_containing("require 'socket.core'", "module 'socket.core' is not available in the sandbox");
}

Test(sandbox, no_binary_chunks)
{
    cr_assert_eq(run("local f, why = load(string.dump(function() return 1 end)) return why"), LUA_OK);
    cr_expect(strstr(lua_tostring(L, -1), "attempt to load a binary chunk (mode is 't')"),
              "got %s", lua_tostring(L, -1));
    cr_assert_eq(run("return load('return 40 + 2')()"), LUA_OK, "source text still loads");
    cr_expect_eq(lua_tointeger(L, -1), 42);
}

Test(sandbox, binary_chunks_even_with_an_explicit_mode)
{
    cr_assert_eq(run("local f, why = load(string.dump(function() return 1 end), 'x', 'b') return why"), LUA_OK);
    cr_expect(strstr(lua_tostring(L, -1), "binary chunk"), "got %s", lua_tostring(L, -1));
}

Test(sandbox, memory_bombs_hit_the_cap)
{
    cr_expect_eq(run("return string.rep('x', 1e9)"), LUA_ERRMEM);
    cr_expect(sandbox_memory_exhausted(sb));
    lua_pop(L, 1);
    cr_expect_eq(run("local t = {} for i = 1, 1e9 do t[i] = i end"), LUA_ERRMEM);
}

Test(sandbox, endless_loops_hit_the_instruction_budget, .timeout = 30)
{
    expect_error_containing("while true do end", "million Lua instructions (an endless loop?)");
}

Test(sandbox, math_random_is_deterministic)
{
    cr_assert_eq(run("return math.random(1, 1000000)"), LUA_OK);
    lua_Integer first = lua_tointeger(L, -1);
    sandbox *other = sandbox_create(false);
    lua_State *L2 = sandbox_state(other);
    cr_assert_eq(luaL_dostring(L2, "return math.random(1, 1000000)"), LUA_OK);
    cr_expect_eq(lua_tointeger(L2, -1), first);
    sandbox_free(other);
}

Test(sandbox, the_api_module_loads)
{
    cr_assert_eq(run("local fs = require 'fleetsim' return fs.version"), LUA_OK, "%s", lua_tostring(L, -1));
    cr_expect_str_eq(lua_tostring(L, -1), "0.1.0");
}

Test(sandbox, unsafe_opens_the_standard_libraries)
{
    sandbox *open = sandbox_create(true);
    lua_State *L2 = sandbox_state(open);
    cr_assert_eq(luaL_dostring(L2, "return type(os.time) .. type(io.open) .. type(debug)"), LUA_OK);
    cr_expect_str_eq(lua_tostring(L2, -1), "functionfunctiontable");
    cr_assert_eq(luaL_dostring(L2, "return require('fleetsim').version"), LUA_OK, "%s", lua_tostring(L2, -1));
    sandbox_free(open);
}

/* ---- units (lua/fleetsim/units.lua) ---- */

TestSuite(units, .init = setup, .fini = teardown);

static double unit(const char *parser, const char *literal)
{
    char code[256];
    snprintf(code, sizeof code, "return require('fleetsim.units').%s(%s)", parser, literal);
    cr_assert_eq(run(code), LUA_OK, "%s", lua_tostring(L, -1));
    cr_assert_eq(lua_type(L, -1), LUA_TNUMBER, "%s(%s) gave no number", parser, literal);
    double x = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return x;
}

Test(units, durations)
{
    cr_expect_float_eq(unit("duration", "'250ms'"), 0.25, 0); /* exactly, by division */
    cr_expect_float_eq(unit("duration", "'90s'"), 90, 0);
    cr_expect_float_eq(unit("duration", "'5m'"), 300, 0);
    cr_expect_float_eq(unit("duration", "'5min'"), 300, 0);
    cr_expect_float_eq(unit("duration", "'2h'"), 7200, 0);
    cr_expect_float_eq(unit("duration", "'1.5h'"), 5400, 0);
    cr_expect_float_eq(unit("duration", "'7d'"), 604800, 0);
    cr_expect_float_eq(unit("duration", "'2w'"), 1209600, 0);
    cr_expect_float_eq(unit("duration", "'3y'"), 3 * 365 * 86400.0, 0);
    cr_expect_float_eq(unit("duration", "'20us'"), 2e-5, 1e-20);
    cr_expect_float_eq(unit("duration", "' 3 s '"), 3, 0);
    cr_expect_float_eq(unit("duration", "42"), 42, 0);
}

Test(units, sizes_and_rates)
{
    cr_expect_float_eq(unit("size", "'80GB'"), 80e9, 0);
    cr_expect_float_eq(unit("size", "'80GiB'"), 80 * 1073741824.0, 0);
    cr_expect_float_eq(unit("size", "'512MiB'"), 512 * 1048576.0, 0);
    cr_expect_float_eq(unit("size", "1024"), 1024, 0);
    cr_expect_float_eq(unit("rate", "'300/min'"), 5, 0);
    cr_expect_float_eq(unit("rate", "'1800/h'"), 0.5, 0);
    cr_expect_float_eq(unit("rate", "'5/s'"), 5, 0);
    cr_expect_float_eq(unit("rate", "'2.5'"), 2.5, 0);
}

static void expect_unit_error(const char *parser, const char *literal, const char *message)
{
    char code[256];
    snprintf(code, sizeof code, "local v, why = require('fleetsim.units').%s(%s) return why",
             parser, literal);
    cr_assert_eq(run(code), LUA_OK, "%s", lua_tostring(L, -1));
    cr_expect_str_eq(lua_tostring(L, -1), message);
    lua_pop(L, 1);
}

Test(units, mistakes_are_explained)
{
    expect_unit_error("duration", "'5 parsecs'",
                      "unknown duration unit \"parsecs\" in \"5 parsecs\" (known: d, h, m, min, ms, ns, s, us, w, y)");
    expect_unit_error("duration", "'soon'", "expected a duration such as \"250ms\" or \"2h\", got \"soon\"");
    expect_unit_error("duration", "{}",
                      "expected a duration (seconds, or a string such as \"250ms\" or \"2h\"), got table");
    expect_unit_error("size", "'80 GQ'",
                      "unknown size unit \"GQ\" in \"80 GQ\" (known: B, GB, GiB, KB, KiB, MB, MiB, PB, PiB, TB, TiB)");
    expect_unit_error("rate", "'5/fortnight'",
                      "unknown rate unit \"fortnight\" in \"5/fortnight\" (known: /d, /day, /h, /hour, /m, /min, /s, /sec)");
}

Test(sandbox, catching_the_budget_error_buys_no_time, .timeout = 30)
{
    /* a pcall that catches the instruction-budget error must not run on: once over the
     * budget every instruction raises */
    expect_error_containing("local function f() while true do end end "
                            "while true do pcall(f) end", "million Lua instructions");
}

Test(sandbox, finalizers_are_refused)
{
    expect_error_containing("setmetatable({}, { __gc = function() while true do end end })",
                            "finalizers (__gc) are not allowed");
    cr_assert_eq(run("return getmetatable(setmetatable({}, { __index = {} })) ~= nil"), LUA_OK);
    cr_expect(lua_toboolean(L, -1), "ordinary metatables still work");
}

Test(sandbox, patterns_that_backtrack_for_hours_run_out_of_budget, .timeout = 30)
{
    /* any number of repetition items: the matcher's steps are counted, not its items */
    expect_error_containing("local s = string.rep('a', 30) "
                            "return s:match(string.rep('a*', 30) .. 'b')",
                            "string.match: more than 2e+08 steps of work in one call");
    sandbox_set_instruction_budget(sb, 0); /* the error spent the budget: a new one */
    cr_assert_eq(run("return ('250ms'):match('^%s*([%d%.]+)%s*(%a*)%s*$')"), LUA_OK,
                 "the unit parser's own patterns still work: %s", lua_tostring(L, -1));
    cr_assert_eq(run("return ('a*b*c'):find('*b*', 1, true)"), LUA_OK, "plain find is no pattern");
    cr_expect_eq(lua_tointeger(L, -1), 2);
    cr_assert_eq(run("return select('#', ('2024-01-02T03:04:05.678Z'):match("
                     "'^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)%.?(%d*)Z?$'))"), LUA_OK,
                 "seven repetition items, cheap: %s", lua_tostring(L, -1));
    cr_expect_eq(lua_tointeger(L, -1), 7);
}

/* Runs code in a sandboxed and in an unsafe state (Lua's own library) and expects the
 * same result or the same message: the sandbox's counted functions are Lua's. */
static void expect_as_lua(const char *code)
{
    sandbox *raw = sandbox_create(true);
    lua_State *R = sandbox_state(raw);
    int mine = run(code);
    int theirs = luaL_loadstring(R, code) == LUA_OK ? lua_pcall(R, 0, 1, 0) : LUA_ERRSYNTAX;
    const char *a = luaL_tolstring(L, -1, NULL), *b = luaL_tolstring(R, -1, NULL);
    cr_expect(mine == theirs && !strcmp(a, b), "%s: sandbox %d '%s', Lua %d '%s'", code, mine,
              a, theirs, b);
    lua_settop(L, 0);
    sandbox_free(raw);
}

/* A result of the code's last expression as one string, for expect_as_lua. */
#define JOINED(x) "local r = table.pack(" x ") " \
                  "for i = 1, r.n do r[i] = string.format('%q', r[i]) end " \
                  "return table.concat(r, ',')"

Test(sandbox, counted_patterns_give_lua_s_results_and_messages)
{
    static const char *const cases[] = {
        JOINED("('hello world'):find('o w')"), JOINED("('hello world'):find('l+')"),
        JOINED("('hello'):find('l', -2)"), JOINED("('hello'):find('xyz', 10)"),
        JOINED("('key = value'):match('^(%w+)%s*=%s*(%w+)$')"),
        JOINED("('[[x]]'):match('%b[]')"), JOINED("('THE (quick) fox'):find('%f[%a]%a+', 5)"),
        JOINED("('abcabc'):match('(a)(b)c%1%2')"), JOINED("('aaa'):match('()a-()')"),
        JOINED("('x = 1, y = 2'):gsub('(%w+) = (%w+)', '%2 = %1')"),
        JOINED("('abc'):gsub('', '-')"), JOINED("('abc'):gsub('^a', 'A', 5)"),
        JOINED("('one two  three'):gsub('%s+', ' ', 1)"),
        "local t = {} for k, v in ('a=1, b=2'):gmatch('(%w+)=(%w+)') do t[#t + 1] = k .. v end "
        "return table.concat(t, ';')",
        "local n = 0 for w in ('a,b,,c'):gmatch('([^,]*)') do n = n + 1 end return n",
        JOINED("('a.b'):find('.', 1, true)"), JOINED("('^$'):find('^$')"),
        JOINED("('x]y'):find('[]]')"), JOINED("('x-y'):find('[a%-]')"),
        JOINED("('a$b'):find('$b')"),
        "return ('x'):find('[a')", "return ('x'):find('%')", "return ('x'):find('%bx')",
        "return ('x'):find('%fx')", "return ('x'):find('(x')", "return ('x'):find('x)')",
        "return ('x'):find('%1')", "return ('xx'):find('(x)%2')", "return ('x'):gsub('(', '')",
        "return ('abc'):find('z[')", "return ('x'):gmatch('[')()",
        "return ('x'):find(string.rep('(', 33) .. 'x' .. string.rep(')', 33))",
        "return ('x'):rep(300):find(string.rep('x?', 300) .. 'y')",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_as_lua(cases[i]);
}

Test(sandbox, counted_patterns_agree_with_lua_on_random_patterns)
{
    /* 3000 random patterns, most of them malformed, on random subjects: every result and
     * every message the same as Lua's own */
    expect_as_lua("math.randomseed(17) local alphabet = { 'a', 'b', '%', '(', ')', '[', ']', "
                  "'^', '$', '*', '+', '-', '?', '.', '1', 'f', 'b' } local out = {} "
                  "for i = 1, 3000 do local p = {} for j = 1, math.random(0, 8) do "
                  "p[j] = alphabet[math.random(#alphabet)] end p = table.concat(p) "
                  "local s = ('ab'):rep(math.random(0, 4)) .. ('a'):rep(math.random(0, 3)) "
                  "local f = ({ 'find', 'match', 'gsub' })[math.random(3)] "
                  "local ok, a, b = pcall(string[f], s, p, f == 'gsub' and '%0' or 1) "
                  "out[#out + 1] = tostring(ok) .. ':' .. tostring(a) .. ':' .. tostring(b) end "
                  "return table.concat(out, '\\n')");
}

Test(sandbox, counted_table_functions_behave_as_lua_s)
{
    static const char *const cases[] = {
        "local t = {1, 2, 3} table.insert(t, 1, 0) table.insert(t, 9) return table.concat(t, ' ')",
        "local t = {1, 2, 3} return table.remove(t, 1) .. table.remove(t) .. #t",
        "local t = {} return tostring(table.remove(t)) .. tostring(table.remove(t, 0))",
        "return table.concat(table.move({1, 2, 3, 4, 5}, 2, 4, 1), ',')",
        "return table.concat(table.move({1, 2, 3, 4, 5}, 1, 3, 3), ',')",
        "return table.concat(table.move({1, 2, 3}, 1, 3, 2, {9, 9, 9, 9}), ',')",
        "return table.concat({1, 2, 3}, ', ', 2, 3) .. table.concat({}, 'x') "
        ".. table.concat({1}, 'x', 3, 2)",
        JOINED("table.unpack({1, 2, 3}, 2)"), JOINED("table.unpack({1, 2, 3}, 3, 2)"),
        "local t = {5, 2, 8, 1} table.sort(t) return table.concat(t, ',')",
        "local t = {5, 2, 8, 1} table.sort(t, function(a, b) return a > b end) "
        "return table.concat(t, ',')",
        "local log = {} local p = setmetatable({}, { __index = function(_, i) return i * 10 end,"
        " __newindex = function(_, i, v) log[#log + 1] = i .. '=' .. v end,"
        " __len = function() return 3 end }) table.insert(p, 1, 'x') return table.concat(log, ' ')",
        "table.insert({}, 5, 1)", "table.insert({}, 1, 2, 3)", "table.insert(nil, 1)",
        "table.remove({1}, 5)", "table.move({}, 1, math.maxinteger, 2)",
        "table.move({}, -1, math.maxinteger, 2)", "table.move({}, 1, 2, math.maxinteger)",
        "table.concat({1, {}, 3})", "table.sort({1, 'x', 2})", "table.sort({3, 1}, 5)",
        "table.unpack({}, 1, 1e8)", "table.concat(5)", "table.move(5, 1, 1, 1)",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_as_lua(cases[i]);
}

Test(sandbox, table_sort_keeps_equal_elements_in_order)
{
    /* the same order on every run: stable (Lua's quicksort is not, and picks pivots from
     * the clock on unbalanced input) */
    cr_assert_eq(run("local t = {} for i = 1, 300 do t[i] = { key = (i * 7) % 3, i = i } end "
                     "table.sort(t, function(a, b) return a.key < b.key end) "
                     "for i = 2, 300 do local a, b = t[i - 1], t[i] "
                     "  if a.key == b.key and a.i > b.i then return 'unstable at ' .. i end end "
                     "return 'stable'"), LUA_OK, "%s", lua_tostring(L, -1));
    cr_expect_str_eq(lua_tostring(L, -1), "stable");
}

/* ---- finding 9: the same order in every run ---- */

/* The keys of the table the code returns as pairs walks them, joined by spaces, in a
 * fresh sandbox (each has its own string hash seed). */
static char *pairs_order(const char *table)
{
    sandbox *fresh = sandbox_create(false);
    lua_State *F = sandbox_state(fresh);
    char code[2048];
    snprintf(code, sizeof code, "local t = %s local keys = {} for k in pairs(t) do "
             "keys[#keys + 1] = tostring(k) end return table.concat(keys, ' ')", table);
    cr_assert_eq(luaL_dostring(F, code), LUA_OK, "%s", lua_tostring(F, -1));
    char *keys = strdup(lua_tostring(F, -1));
    sandbox_free(fresh);
    return keys;
}

Test(sandbox, pairs_walks_numbers_then_strings_then_booleans)
{
    char *keys = pairs_order("{ b = 1, [3] = 1, a = 1, [true] = 1, [-1.5] = 1, [false] = 1,"
                             " ab = 1, [2^53] = 1, [1] = 1, A = 1, [''] = 1, [0.5] = 1 }");
    cr_expect_str_eq(keys, "-1.5 0.5 1 3 9007199254740992  A a ab b false true");
    free(keys);
}

Test(sandbox, pairs_gives_the_same_order_in_every_state)
{
    char *first = pairs_order("(function() local t = {} for i = 1, 40 do t['k' .. i] = i end "
                              "return t end)()");
    cr_expect(!strncmp(first, "k1 k10 k11 k12 ", 15), "sorted by bytes: %s", first);
    for (int i = 0; i < 8; i++) {
        char *again = pairs_order("(function() local t = {} for i = 1, 40 do t['k' .. i] = i end "
                                  "return t end)()");
        cr_expect_str_eq(again, first);
        free(again);
    }
    free(first);
}

Test(sandbox, next_walks_in_the_order_of_pairs)
{
    cr_assert_eq(run("local t = { z = 1, [2] = 1, m = 1, [1] = 1 } local keys, k = {}, nil "
                     "repeat k = next(t, k) keys[#keys + 1] = tostring(k) until k == nil "
                     "return table.concat(keys, ' ') .. ' ' .. tostring(next({}))"), LUA_OK,
                 "%s", lua_tostring(L, -1));
    cr_expect_str_eq(lua_tostring(L, -1), "1 2 m z nil nil");
}

Test(sandbox, a_loop_of_next_calls_costs_what_pairs_does, .timeout = 30)
{
    /* 200,000 keys: a scan for each call would be 4e10 steps, past the budget */
    cr_assert_eq(run("local t = {} for i = 1, 200000 do t['k' .. i] = i end "
                     "local n, k, last = 0, nil, '' repeat k = next(t, k) "
                     "if k then n = n + 1 assert(k > last) last = k end until k == nil "
                     "t.new = 1 local seen = false "
                     "for key in next, t do seen = seen or key == 'new' end "
                     "return n .. ' ' .. tostring(seen)"), LUA_OK, "%s", lua_tostring(L, -1));
    cr_expect_str_eq(lua_tostring(L, -1), "200000 true");
}

Test(sandbox, keys_removed_during_the_loop_are_skipped)
{
    cr_assert_eq(run("local t = { a = 1, b = 2, c = 3, d = 4 } local seen = {} "
                     "for k in pairs(t) do seen[#seen + 1] = k t.c = nil t.a = nil end "
                     "return table.concat(seen, ' ')"), LUA_OK, "%s", lua_tostring(L, -1));
    cr_expect_str_eq(lua_tostring(L, -1), "a b d");
}

Test(sandbox, table_keys_are_ordered_by_when_first_seen)
{
    cr_assert_eq(run("local a, b, c = {}, {}, {} local names = { [a] = 'a', [b] = 'b', [c] = 'c' } "
                     "tostring(c) tostring(a) tostring(b) "
                     "local order = {} for k, v in pairs(names) do order[#order + 1] = v end "
                     "return table.concat(order)"), LUA_OK, "%s", lua_tostring(L, -1));
    cr_expect_str_eq(lua_tostring(L, -1), "cab");
    /* fs objects are numbered as they are made */
    cr_assert_eq(run("local fs = require 'fleetsim' local p, q = fs.poisson { rate = 1 }, "
                     "fs.poisson { rate = 2 } local t = { [q] = 'q', [p] = 'p' } "
                     "local order = '' for k, v in pairs(t) do order = order .. v end "
                     "return order"),
                 LUA_OK, "%s", lua_tostring(L, -1));
    cr_expect_str_eq(lua_tostring(L, -1), "pq");
    /* two never seen at once have no order that holds from run to run */
    expect_error_containing("for k in pairs({ [{}] = 1, [{}] = 2 }) do end",
                            "pairs: the table has two or more keys that are tables");
    expect_error_containing("next({ [function() end] = 1, [function() end] = 2 })",
                            "next: the table has two or more keys");
    cr_assert_eq(run("local t = { x = 1, [{}] = 2, [{}] = 3 } return next(t)"), LUA_OK,
                 "a name comes first, no object needs a number: %s", lua_tostring(L, -1));
    cr_expect_str_eq(lua_tostring(L, -1), "x");
}

Test(sandbox, pairs_keeps_the_pairs_metamethod)
{
    cr_assert_eq(run("local t = setmetatable({}, { __pairs = function(t) "
                     "return function(_, k) if not k then return 1, 'one' end end, t, nil end }) "
                     "for k, v in pairs(t) do return v end"), LUA_OK, "%s", lua_tostring(L, -1));
    cr_expect_str_eq(lua_tostring(L, -1), "one");
}

Test(sandbox, tostring_and_format_print_no_address)
{
    cr_assert_eq(run("local t = {} return tostring(t) .. ' ' .. tostring(print):gsub(': #%d+', '') "
                     ".. ' ' .. string.format('%s|%5.3s', t, 'abcdef') .. ' ' .. tostring(t)"),
                 LUA_OK, "%s", lua_tostring(L, -1));
    cr_expect_str_eq(lua_tostring(L, -1), "table: #1 function table: #1|  abc table: #1");
    cr_assert_eq(run("return tostring(setmetatable({}, { __tostring = function() "
                     "return 'mine' end })) .. tostring(setmetatable({}, { __name = 'Pool' }))"
                     ":gsub('#%d+', 'n')"), LUA_OK);
    cr_expect_str_eq(lua_tostring(L, -1), "minePool: n");
    expect_error_containing("return string.format('%p', {})",
                            "invalid conversion '%p' to 'format'");
}

/* ---- finding 10: every replication starts from the state the file made ---- */

TestSuite(rewind, .timeout = 120);

/* A serving scenario whose routing function keeps state: an upvalue counter, math.random
 * and a global; its claim reports the counter. */
static const char stateful_routing[] =
    "local fs = require \"fleetsim\"\n"
    "local calls = 0\n"
    "return fs.scenario { duration = \"10m\", replications = 3, seed = 7,\n"
    "  pools = { g = fs.dedicated { gpu = \"H100-SXM\", count = 4 } },\n"
    "  workloads = { chat = fs.inference { model = \"llama-3-8b\", pool = \"g\",\n"
    "    max_wait = \"30s\", prompt = 100, output = 20, arrivals = fs.poisson { rate = 5 },\n"
    "    routing = function(replicas, request)\n"
    "      calls = calls + 1\n"
    "      seen = (seen or 0) + 1\n"
    "      if calls < 200 then return 1 end\n"
    "      return math.random(#replicas)\n"
    "    end } },\n"
    "  sweep = SWEEP,\n"
    "  claim = fs.claim { text = \"the state is fresh\", verdict = function(r)\n"
    "    return calls == 0 and seen == nil and \"holds\" or \"refuted\",\n"
    "      \"calls \" .. calls end } }\n";

/* summary.csv (or sweep.csv) of `run` with jobs processes; *verdict gets stdout. */
static char *run_with_jobs(const char *dir, const char *sweep, int jobs, char **verdict)
{
    char text[4096], *at = strstr(stateful_routing, "SWEEP");
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - stateful_routing), stateful_routing,
             sweep, at + strlen("SWEEP"));
    free(scratch_file(dir, "r.lua", text));
    char *out = NULL, *err = NULL, path[512];
    cr_assert_eq(cli_run(&out, &err, "run %s/r.lua -q --no-plots -j %d -o %s/j%d", dir, jobs,
                         dir, jobs), 0, "%s", err);
    snprintf(path, sizeof path, "%s/j%d/%s", dir, jobs, strcmp(sweep, "nil") ? "sweep.csv"
                                                                            : "summary.csv");
    char *csv = scratch_read(path);
    cr_assert(csv, "no %s", path);
    *verdict = out;
    free(err);
    return csv;
}

Test(rewind, replications_give_the_same_bytes_with_any_number_of_processes)
{
    char *dir = scratch_dir();
    char *v1, *v2, *v3;
    char *one = run_with_jobs(dir, "nil", 1, &v1), *two = run_with_jobs(dir, "nil", 2, &v2);
    cr_expect_str_eq(one, two, "--jobs 1 and --jobs 2 differ");
    cr_expect(strstr(v1, "-- calls 0 -- holds") && strstr(v2, "-- calls 0 -- holds"),
              "the verdict saw a run's state: %s // %s", v1, v2);
    free(one);
    free(two);
    free(v1);
    free(v2);
    one = run_with_jobs(dir, "{ [\"pools.g.count\"] = { 2, 4 } }", 1, &v1);
    char *three = run_with_jobs(dir, "{ [\"pools.g.count\"] = { 2, 4 } }", 3, &v3);
    cr_expect_str_eq(one, three, "a sweep with --jobs 1 and --jobs 3 differs");
    free(one);
    free(three);
    free(v1);
    free(v3);
    scratch_remove_dir(dir);
}

/* A file that costs much to run, run again before each of many replications, would
 * take hours before the last one starts: refused at load, as check shows. */
Test(rewind, a_costly_file_run_again_for_many_replications_is_refused_at_load)
{
    char *dir = scratch_dir();
    char *file = scratch_file(dir, "heavy.lua",
        "local fs = require \"fleetsim\"\n"
        "local x = 0 for i = 1, 3e7 do x = x + i end\n"
        "return fs.scenario { duration = \"1m\", replications = 1000,\n"
        "  pools = { g = fs.dedicated { gpu = \"H100-SXM\", count = 4 } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3-8b\", pool = \"g\",\n"
        "    max_wait = \"30s\", prompt = 100, output = 20, arrivals = fs.poisson { rate = 5 },\n"
        "    routing = function(replicas, request) return 1 end } } }\n");
    char *out = NULL, *err = NULL;
    cr_expect_eq(cli_run(&out, &err, "check %s", file), 2, "%s", err);
    cr_expect(strstr(err, "heavy.lua: the file runs again before each of its 1000 replications")
              && strstr(err, "over the limit of 1e+04 million"), "%s", err);
    cr_expect_eq(cli_run(&out, &err, "check %s --replications 20", file), 0, "%s", err);
    free(out);
    free(err);
    free(file);
    scratch_remove_dir(dir);
}
