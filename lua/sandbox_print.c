/* print in a scenario file (see sandbox.h): one line on stderr, marked as the file's,
 * never on stdout where the results and the summary go:
 *
 *   fleetsim: fleet.lua: print: text	more text
 *
 * Control characters, C1 controls and bytes that are not UTF-8 are written escaped (\n,
 * \t, \x1b), so that no scenario can move the cursor, clear the screen or retitle the
 * terminal, nor print a line that passes for one of fleetsim's own. */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/sandbox.h"
#include "lua/sandbox_internal.h"

/* The length of the well-formed UTF-8 sequence at s (n bytes left) that is not a C1
 * control (U+0080 to U+009F), or 0. */
static size_t printable_sequence(const unsigned char *s, size_t n)
{
    size_t len = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if (len == 2 && s[0] == 0xC2 && s[1] < 0xA0)
        return 0; /* C1 */
    if (len == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0)))
        return 0; /* overlong, or a surrogate */
    if (len == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90)))
        return 0; /* overlong, or past U+10FFFF */
    return len;
}

static void add_escaped(luaL_Buffer *b, const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < n;) {
        size_t len = s[i] >= 0x80 ? printable_sequence(s + i, n - i)
                                  : (size_t)(s[i] >= 0x20 && s[i] != 0x7F);
        if (len) {
            luaL_addlstring(b, text + i, len);
            i += len;
            continue;
        }
        char escape[8];
        if (s[i] == '\n' || s[i] == '\t' || s[i] == '\r')
            snprintf(escape, sizeof escape, "\\%c", s[i] == '\n' ? 'n' : s[i] == '\t' ? 't' : 'r');
        else
            snprintf(escape, sizeof escape, "\\x%02x", s[i]);
        luaL_addstring(b, escape);
        i++;
    }
}

static int sandboxed_print(lua_State *L)
{
    int n = lua_gettop(L);
    for (int i = 1; i <= n; i++) { /* first, as __tostring may run Lua */
        sandbox_tostring(L, i, NULL);
        lua_replace(L, i);
    }
    const char *file = sandbox_file(sandbox_of(L));
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "fleetsim: ");
    if (*file) {
        add_escaped(&b, file, strlen(file));
        luaL_addstring(&b, ": ");
    }
    luaL_addstring(&b, "print: ");
    for (int i = 1; i <= n; i++) {
        size_t len;
        const char *text = lua_tolstring(L, i, &len);
        if (i > 1)
            luaL_addchar(&b, '\t'); /* a tab inside a value is escaped */
        add_escaped(&b, text, len);
    }
    luaL_addchar(&b, '\n');
    luaL_pushresult(&b);
    size_t len;
    const char *line = lua_tolstring(L, -1, &len);
    fwrite(line, 1, len, stderr);
    fflush(stderr);
    return 0;
}

void sandbox_open_print(lua_State *L)
{
    lua_pushcfunction(L, sandboxed_print);
    lua_setglobal(L, "print");
}
