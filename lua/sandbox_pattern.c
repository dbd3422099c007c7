/* string.find, match, gmatch and gsub with the matcher's work charged to the budget (see
 * sandbox.h).
 *
 * Lua's pattern matcher backtracks in C, where the instruction hook never runs:
 * string.find(("a"):rep(2000), "a*a*a*b") takes hours (n^4 steps).  So before Lua's
 * own function runs, a counting matcher walks the same search (the same items in the
 * same order, backtracking the same way, Lua 5.4's rules of the reference manual, s6.4.1)
 * and counts its steps: one per item tried, per character a repetition or %b scans, per
 * byte a set or a back-reference compares.  It stops as soon as the count passes what
 * is left of the budget, and the call raises the budget's error (sandbox_charge);
 * otherwise the count is charged and Lua's function runs, whose results and messages
 * stay Lua's.  gmatch is counted for the whole iteration when it is called.  The
 * counting matcher raises Lua's own error for a malformed pattern when it meets one,
 * before Lua's would. */
#include <ctype.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/sandbox.h"
#include "lua/sandbox_internal.h"

#define MATCH_DEPTH 200   /* Lua's MAXCCALLS for the matcher: "pattern too complex" */
#define MAX_CAPTURES 32   /* LUA_MAXCAPTURES */
#define CAP_UNFINISHED (-1)
#define CAP_POSITION (-2)
#define ESC '%'
#define SPECIALS "^$*+?.([%-"

typedef struct counter {
    lua_State *L;
    const char *src_init, *src_end, *p_end;
    int depth, level;
    struct { const char *init; ptrdiff_t len; } capture[MAX_CAPTURES];
    uint64_t steps, limit;
    bool stop;            /* over the limit, or an error: unwind */
    const char *error;    /* Lua's message for a malformed pattern */
    int error_capture;    /* for "invalid capture index %%%d" */
} counter;

static bool step(counter *m, uint64_t n)
{
    m->steps += n;
    if (m->steps > m->limit)
        m->stop = true;
    return !m->stop;
}

static void fail(counter *m, const char *message)
{
    m->error = message;
    m->stop = true;
}

/* The end of the single-character class at p; NULL after fail(). */
static const char *class_end(counter *m, const char *p)
{
    switch (*p++) {
    case ESC:
        if (p == m->p_end) {
            fail(m, "malformed pattern (ends with '%')");
            return NULL;
        }
        return p + 1;
    case '[':
        if (*p == '^')
            p++;
        do { /* the first character after [ or [^ is part of the set, even ] */
            if (p == m->p_end) {
                fail(m, "malformed pattern (missing ']')");
                return NULL;
            }
            if (*(p++) == ESC && p < m->p_end)
                p++;
        } while (*p != ']');
        return p + 1;
    default:
        return p;
    }
}

static bool match_class(int c, int cl)
{
    bool yes;
    switch (tolower(cl)) {
    case 'a': yes = isalpha(c); break;
    case 'c': yes = iscntrl(c); break;
    case 'd': yes = isdigit(c); break;
    case 'g': yes = isgraph(c); break;
    case 'l': yes = islower(c); break;
    case 'p': yes = ispunct(c); break;
    case 's': yes = isspace(c); break;
    case 'u': yes = isupper(c); break;
    case 'w': yes = isalnum(c); break;
    case 'x': yes = isxdigit(c); break;
    default: return cl == c;
    }
    return isupper(cl) ? !yes : yes;
}

/* [set] from p to ec (its ']'). */
static bool match_set(int c, const char *p, const char *ec)
{
    bool yes = true;
    if (*(p + 1) == '^') {
        yes = false;
        p++;
    }
    while (++p < ec) {
        if (*p == ESC) {
            p++;
            if (match_class(c, (unsigned char)*p))
                return yes;
        } else if (*(p + 1) == '-' && p + 2 < ec) {
            p += 2;
            if ((unsigned char)*(p - 2) <= c && c <= (unsigned char)*p)
                return yes;
        } else if ((unsigned char)*p == c) {
            return yes;
        }
    }
    return !yes;
}

static bool single_match(counter *m, const char *s, const char *p, const char *ep)
{
    if (!step(m, *p == '[' ? (uint64_t)(ep - p) : 1) || s >= m->src_end)
        return false;
    int c = (unsigned char)*s;
    switch (*p) {
    case '.': return true;
    case ESC: return match_class(c, (unsigned char)*(p + 1));
    case '[': return match_set(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

static const char *match(counter *m, const char *s, const char *p);

static const char *max_expand(counter *m, const char *s, const char *p, const char *ep)
{
    ptrdiff_t i = 0;
    while (single_match(m, s + i, p, ep))
        i++;
    for (; i >= 0 && !m->stop; i--) {
        const char *res = match(m, s + i, ep + 1);
        if (res)
            return res;
    }
    return NULL;
}

static const char *min_expand(counter *m, const char *s, const char *p, const char *ep)
{
    for (;;) {
        const char *res = match(m, s, ep + 1);
        if (res || m->stop)
            return res;
        if (!single_match(m, s, p, ep))
            return NULL;
        s++;
    }
}

static const char *start_capture(counter *m, const char *s, const char *p, ptrdiff_t what)
{
    if (m->level >= MAX_CAPTURES) {
        fail(m, "too many captures");
        return NULL;
    }
    m->capture[m->level].init = s;
    m->capture[m->level].len = what;
    m->level++;
    const char *res = match(m, s, p);
    if (!res)
        m->level--;
    return res;
}

static const char *end_capture(counter *m, const char *s, const char *p)
{
    int l = m->level - 1;
    while (l >= 0 && m->capture[l].len != CAP_UNFINISHED)
        l--;
    if (l < 0) {
        fail(m, "invalid pattern capture");
        return NULL;
    }
    m->capture[l].len = s - m->capture[l].init;
    const char *res = match(m, s, p);
    if (!res)
        m->capture[l].len = CAP_UNFINISHED;
    return res;
}

static const char *match_capture(counter *m, const char *s, int l)
{
    l -= '1';
    if (l < 0 || l >= m->level || m->capture[l].len == CAP_UNFINISHED) {
        m->error_capture = l + 1;
        fail(m, "invalid capture index %%%d");
        return NULL;
    }
    size_t len = (size_t)m->capture[l].len; /* a position capture: huge, never fits */
    if ((size_t)(m->src_end - s) >= len && step(m, len)
        && memcmp(m->capture[l].init, s, len) == 0)
        return s + len;
    return NULL;
}

static const char *match_balance(counter *m, const char *s, const char *p)
{
    if (p >= m->p_end - 1) {
        fail(m, "malformed pattern (missing arguments to '%b')");
        return NULL;
    }
    if (*s != *p) /* s may be at the end: its terminating zero */
        return NULL;
    int b = *p, e = *(p + 1), open = 1;
    while (++s < m->src_end) {
        if (!step(m, 1))
            return NULL;
        if (*s == e) {
            if (--open == 0)
                return s + 1;
        } else if (*s == b) {
            open++;
        }
    }
    return NULL;
}

static const char *match(counter *m, const char *s, const char *p)
{
    if (m->depth-- == 0) {
        fail(m, "pattern too complex");
        return NULL;
    }
    for (;;) {
        if (!step(m, 1)) {
            s = NULL;
            break;
        }
        if (p == m->p_end)
            break;
        if (*p == '(') {
            s = *(p + 1) == ')' ? start_capture(m, s, p + 2, CAP_POSITION)
                                : start_capture(m, s, p + 1, CAP_UNFINISHED);
            break;
        }
        if (*p == ')') {
            s = end_capture(m, s, p + 1);
            break;
        }
        if (*p == '$' && p + 1 == m->p_end) {
            s = s == m->src_end ? s : NULL;
            break;
        }
        if (*p == ESC && *(p + 1) == 'b') {
            s = match_balance(m, s, p + 2);
            if (!s)
                break;
            p += 4;
            continue;
        }
        if (*p == ESC && *(p + 1) == 'f') {
            p += 2;
            if (*p != '[') {
                fail(m, "missing '[' after '%f' in pattern");
                s = NULL;
                break;
            }
            const char *ep = class_end(m, p);
            if (!ep) {
                s = NULL;
                break;
            }
            int previous = s == m->src_init ? '\0' : (unsigned char)*(s - 1);
            int current = s < m->src_end ? (unsigned char)*s : '\0';
            if (step(m, (uint64_t)(ep - p)) && !match_set(previous, p, ep - 1)
                && match_set(current, p, ep - 1)) {
                p = ep;
                continue;
            }
            s = NULL;
            break;
        }
        if (*p == ESC && isdigit((unsigned char)*(p + 1))) {
            s = match_capture(m, s, (unsigned char)*(p + 1));
            if (!s)
                break;
            p += 2;
            continue;
        }
        const char *ep = class_end(m, p);
        if (!ep) {
            s = NULL;
            break;
        }
        if (!single_match(m, s, p, ep)) {
            if (*ep == '*' || *ep == '?' || *ep == '-') { /* may match nothing */
                p = ep + 1;
                continue;
            }
            s = NULL;
            break;
        }
        if (*ep == '?') {
            const char *res = match(m, s + 1, ep + 1);
            if (res || m->stop) {
                s = res;
                break;
            }
            p = ep + 1;
            continue;
        }
        if (*ep == '+' || *ep == '*') {
            s = max_expand(m, *ep == '+' ? s + 1 : s, p, ep);
            break;
        }
        if (*ep == '-') {
            s = min_expand(m, s, p, ep);
            break;
        }
        s++;
        p = ep;
    }
    m->depth++;
    return m->stop ? NULL : s;
}

/* ---- the four functions ----------------------------------------------------------- */

static size_t start_of(lua_Integer pos, size_t len) /* 0-based, as Lua's posrelatI */
{
    if (pos > 0)
        return (size_t)pos - 1;
    if (pos == 0 || pos < -(lua_Integer)len)
        return 0;
    return len + (size_t)pos;
}

static void counter_init(counter *m, lua_State *L, const char *s, size_t ls, const char *p,
                         size_t lp)
{
    memset(m, 0, sizeof *m);
    m->L = L;
    m->src_init = s;
    m->src_end = s + ls;
    m->p_end = p + lp;
    m->limit = sandbox_budget_left(L);
}

/* One attempt at s, as Lua's each start does (fresh captures and depth). */
static const char *attempt(counter *m, const char *s, const char *p)
{
    m->level = 0;
    m->depth = MATCH_DEPTH;
    return match(m, s, p);
}

/* Charges the count (raising if over the budget, or Lua's error), then runs Lua's own. */
static int settle(lua_State *L, counter *m, const char *what)
{
    if (m->error && m->steps <= m->limit) {
        if (m->error_capture)
            return luaL_error(L, m->error, m->error_capture);
        return luaL_error(L, "%s", m->error);
    }
    sandbox_charge(L, m->stop ? m->limit + 1 : m->steps, what);
    return sandbox_call_original(L);
}

/* lmemfind's work: a scan for the first byte, a comparison at each candidate. */
static void count_plain(counter *m, const char *s, size_t ls, const char *p, size_t lp)
{
    if (lp == 0 || lp > ls)
        return;
    const char *end = s + ls - (lp - 1);
    while (s < end && !m->stop) {
        const char *at = memchr(s, *p, (size_t)(end - s));
        step(m, (uint64_t)((at ? at : end) - s) / 16 + 1);
        if (!at)
            return;
        step(m, lp);
        if (memcmp(at, p, lp) == 0)
            return;
        s = at + 1;
    }
}

static bool has_specials(const char *p, size_t lp)
{
    for (size_t i = 0; i < lp; i++)
        if (p[i] && strchr(SPECIALS, p[i]))
            return true;
    return false;
}

static int find_or_match(lua_State *L, bool find, const char *what)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_of(luaL_optinteger(L, 3, 1), ls);
    counter m;
    counter_init(&m, L, s, ls, p, lp);
    if (init > ls)
        return settle(L, &m, what);
    if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
        count_plain(&m, s + init, ls - init, p, lp);
        return settle(L, &m, what);
    }
    bool anchor = *p == '^';
    if (anchor) {
        p++;
        lp--;
        m.p_end = p + lp;
    }
    const char *s1 = s + init;
    do {
        if (attempt(&m, s1, p) || m.stop)
            break;
    } while (s1++ < m.src_end && !anchor);
    return settle(L, &m, what);
}

static int counted_find(lua_State *L) { return find_or_match(L, true, "string.find"); }
static int counted_match(lua_State *L) { return find_or_match(L, false, "string.match"); }

static int counted_gmatch(lua_State *L)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_of(luaL_optinteger(L, 3, 1), ls);
    if (init > ls)
        init = ls + 1;
    counter m;
    counter_init(&m, L, s, ls, p, lp);
    const char *last = NULL;
    for (const char *src = s + init; src <= m.src_end && !m.stop;) {
        const char *e = attempt(&m, src, p);
        if (e && e != last) { /* a match: the next iteration starts at its end */
            src = last = e;
            continue;
        }
        src++;
    }
    return settle(L, &m, "string.gmatch");
}

static int counted_gsub(lua_State *L)
{
    size_t ls, lp;
    const char *src = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
    counter m;
    counter_init(&m, L, src, ls, p, lp);
    bool anchor = *p == '^';
    if (anchor) {
        p++;
        lp--;
        m.p_end = p + lp;
    }
    const char *last = NULL;
    for (lua_Integer n = 0; n < max && !m.stop;) {
        const char *e = attempt(&m, src, p);
        if (m.stop)
            break;
        if (e && e != last) {
            n++;
            src = last = e;
        } else if (src < m.src_end) {
            src++;
        } else {
            break;
        }
        if (anchor)
            break;
    }
    return settle(L, &m, "string.gsub");
}

void sandbox_open_patterns(lua_State *L)
{
    static const struct { const char *name; lua_CFunction counted; } functions[] = {
        { "find", counted_find }, { "match", counted_match },
        { "gmatch", counted_gmatch }, { "gsub", counted_gsub },
    };
    lua_getglobal(L, "string");
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
        lua_getfield(L, -1, functions[i].name);
        lua_pushcclosure(L, functions[i].counted, 1);
        lua_setfield(L, -2, functions[i].name);
    }
    lua_pop(L, 1);
}
