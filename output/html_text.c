#include "output/html_text.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/array.h"
#include "sim/plain_file.h"

void html_escape(FILE *out, const char *text)
{
    for (const char *p = text; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default:
            /* control bytes other than tab and newline are not allowed in XML */
            if ((unsigned char)*p < 0x20 && *p != '\t' && *p != '\n')
                fputc(' ', out);
            else
                fputc(*p, out);
        }
    }
}

char *html_read_file(const char *path)
{
    FILE *f = sim_open_plain(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *text = malloc(cap);
    while (text && (got = fread(text + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n < 2) {
            char *grown = sim_array_try_grow(text, &cap, n + 2, 1, SIZE_MAX);
            if (!grown)
                free(text);
            text = grown;
        }
    }
    bool bad = ferror(f);
    fclose(f);
    if (!text || bad) {
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

/* Whether p starts with s. */
static bool at(const char *p, const char *s)
{
    return strncmp(p, s, strlen(s)) == 0;
}

int html_inline_svg(FILE *out, const char *path, const char *id_prefix)
{
    char *text = html_read_file(path);
    const char *p = text ? strstr(text, "<svg") : NULL;
    const char *end = p ? strstr(p, "</svg>") : NULL;
    if (!end) {
        free(text);
        return -1;
    }
    end += strlen("</svg>");
    while (p < end) {
        /* an id's definition (after a space) or a reference: copy its head, then the
         * prefix, then the name follows as plain text */
        static const char *const heads[] = { "id='", "id=\"", "href='#", "href=\"#", "url(#" };
        size_t n = 0;
        for (size_t i = 0; i < sizeof heads / sizeof *heads && !n; i++)
            if (at(p, heads[i]) && (i >= 2 || (p > text && (p[-1] == ' ' || p[-1] == '\t'
                                                             || p[-1] == '\n'))))
                n = strlen(heads[i]);
        if (n) {
            fwrite(p, 1, n, out);
            fputs(id_prefix, out);
            p += n;
        } else {
            fputc(*p++, out);
        }
    }
    fputc('\n', out);
    free(text);
    return 0;
}

const char *html_meta_content(const char *page, const char *name, char *buf, size_t size)
{
    char key[256];
    snprintf(key, sizeof key, "<meta name=\"%s\" content=\"", name);
    const char *p = page ? strstr(page, key) : NULL;
    if (!p || size == 0)
        return NULL;
    static const char *const entities[][2] = {
        { "&amp;", "&" }, { "&lt;", "<" }, { "&gt;", ">" }, { "&quot;", "\"" }, { "&#39;", "'" },
    };
    size_t n = 0;
    for (p += strlen(key); *p && *p != '"' && n + 1 < size; ) {
        size_t i = 0;
        while (i < 5 && !at(p, entities[i][0]))
            i++;
        if (i < 5) {
            buf[n++] = entities[i][1][0];
            p += strlen(entities[i][0]);
        } else {
            buf[n++] = *p++;
        }
    }
    buf[n] = '\0';
    return buf;
}
