#include "xml_check.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum { MAX_DEPTH = 256, MAX_NAME = 64 };

static bool name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.' || c == ':';
}

/* Reads a name at *p into out; its length (0: none). */
static size_t read_name(const char **p, char *out)
{
    size_t n = 0;
    while (name_char(**p) && n + 1 < MAX_NAME)
        out[n++] = *(*p)++;
    out[n] = '\0';
    return n;
}

static const char *entity_ok(const char *p)
{
    static const char *const known[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
    for (size_t i = 0; i < 5; i++)
        if (!strncmp(p, known[i], strlen(known[i])))
            return p + strlen(known[i]);
    if (p[1] == '#') {
        const char *q = p + 2;
        bool hex = *q == 'x';
        q += hex;
        const char *digits = q;
        while (hex ? isxdigit((unsigned char)*q) : isdigit((unsigned char)*q))
            q++;
        if (q > digits && *q == ';')
            return q + 1;
    }
    return NULL;
}

const char *xml_check(const char *text, char *buf, size_t size)
{
    char stack[MAX_DEPTH][MAX_NAME];
    int depth = 0, roots = 0;
    const char *p = text;
#define FAIL(...) do { snprintf(buf, size, __VA_ARGS__); return buf; } while (0)
    while (*p) {
        size_t offset = (size_t)(p - text);
        if (*p == '&') {
            const char *q = entity_ok(p);
            if (!q)
                FAIL("bad entity at byte %zu: %.12s", offset, p);
            p = q;
        } else if (*p != '<') {
            if (depth == 0 && !isspace((unsigned char)*p))
                FAIL("text outside the root at byte %zu", offset);
            p++;
        } else if (!strncmp(p, "<!--", 4)) {
            const char *end = strstr(p + 4, "-->");
            if (!end)
                FAIL("unclosed comment at byte %zu", offset);
            p = end + 3;
        } else if (!strncmp(p, "<![CDATA[", 9)) {
            const char *end = strstr(p, "]]>");
            if (!end)
                FAIL("unclosed CDATA at byte %zu", offset);
            p = end + 3;
        } else if (!strncmp(p, "<?", 2) || !strncmp(p, "<!", 2)) {
            const char *end = strchr(p, '>');
            if (!end)
                FAIL("unclosed declaration at byte %zu", offset);
            p = end + 1;
        } else if (p[1] == '/') {
            char name[MAX_NAME];
            p += 2;
            read_name(&p, name);
            while (isspace((unsigned char)*p))
                p++;
            if (*p != '>' || depth == 0 || strcmp(stack[depth - 1], name) != 0)
                FAIL("</%s> at byte %zu does not close <%s>", name, offset,
                     depth ? stack[depth - 1] : "(nothing)");
            depth--;
            p++;
        } else {
            char name[MAX_NAME], attr[MAX_NAME];
            p++;
            if (!read_name(&p, name))
                FAIL("bad tag at byte %zu", offset);
            for (;;) {
                while (isspace((unsigned char)*p))
                    p++;
                if (*p == '>' || !strncmp(p, "/>", 2))
                    break;
                bool named = read_name(&p, attr) > 0;
                while (isspace((unsigned char)*p))
                    p++;
                if (!named || *p++ != '=')
                    FAIL("bad attribute in <%s> at byte %zu", name, offset);
                while (isspace((unsigned char)*p))
                    p++;
                if (*p != '"' && *p != '\'')
                    FAIL("unquoted attribute in <%s> at byte %zu", name, offset);
                char quote = *p++;
                while (*p && *p != quote) {
                    if (*p == '<')
                        FAIL("'<' in an attribute of <%s> at byte %zu", name, offset);
                    if (*p == '&' && !entity_ok(p))
                        FAIL("bad entity in <%s> at byte %zu", name, offset);
                    p++;
                }
                if (!*p++)
                    FAIL("unclosed attribute in <%s> at byte %zu", name, offset);
            }
            if (depth == 0 && ++roots > 1)
                FAIL("a second root <%s> at byte %zu", name, offset);
            if (*p == '>') {
                if (depth == MAX_DEPTH)
                    FAIL("nested too deep at byte %zu", offset);
                snprintf(stack[depth++], MAX_NAME, "%s", name);
                p++;
            } else {
                p += 2;
            }
        }
    }
    if (depth > 0)
        FAIL("<%s> is never closed", stack[depth - 1]);
    if (roots == 0)
        FAIL("no root element");
#undef FAIL
    return NULL;
}

size_t xml_count_elements(const char *text, const char *name)
{
    size_t n = 0, len = strlen(name);
    for (const char *p = text; (p = strchr(p, '<')); p++)
        if (!strncmp(p + 1, name, len) && !name_char(p[1 + len]))
            n++;
    return n;
}

size_t xml_count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}
