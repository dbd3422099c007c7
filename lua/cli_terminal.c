/* Escaping output streams (see cli_terminal.h). */
#define _GNU_SOURCE /* fopencookie */
#include "lua/cli_terminal.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

static FILE *raw_stderr;

typedef struct terminal {
    int fd;
    bool after_c2;   /* the last byte written was 0xC2: a C1 control may follow */
} terminal;

static terminal terminals[2] = { { 1, false }, { 2, false } };

static bool write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* Escapes n bytes; *after_c2 carries a 0xC2 across calls.  Returns what it wrote. */
static size_t escape(char *out, size_t size, const char *text, size_t n, bool *after_c2)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 9 < size; i++) {
        unsigned char c = (unsigned char)text[i];
        bool control = (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
        bool c1 = *after_c2 && c >= 0x80 && c <= 0x9f;
        if (c1) /* the 0xC2 before it went out as it was: say it */
            k += (size_t)snprintf(out + k, size - k, "\\x%02x", c);
        else if (control)
            k += (size_t)snprintf(out + k, size - k, "\\x%02x", c);
        else
            out[k++] = (char)c;
        *after_c2 = c == 0xc2;
    }
    return k;
}

size_t cli_terminal_escape(char *buf, size_t size, const char *text, size_t n)
{
    bool after_c2 = false;
    size_t k = size ? escape(buf, size, text, n, &after_c2) : 0;
    if (size)
        buf[k < size ? k : size - 1] = '\0';
    return k;
}

static ssize_t terminal_write(void *cookie, const char *data, size_t n)
{
    terminal *t = cookie;
    char buf[4096];
    size_t done = 0;
    while (done < n) {
        size_t part = n - done < 400 ? n - done : 400; /* 400 bytes escape to 3,600 at most */
        size_t k = escape(buf, sizeof buf, data + done, part, &t->after_c2);
        if (!write_all(t->fd, buf, k))
            return done ? (ssize_t)done : -1;
        done += part;
    }
    return (ssize_t)n;
}

static FILE *open_terminal(terminal *t)
{
    cookie_io_functions_t io = { .write = terminal_write };
    return fopencookie(t, "w", io);
}

void cli_terminal_install(void)
{
    fflush(stdout);
    fflush(stderr);
    FILE *out = open_terminal(&terminals[0]), *err = open_terminal(&terminals[1]);
    raw_stderr = stderr;
    if (!out || !err) { /* out of memory: plain streams, as they were */
        if (out)
            fclose(out);
        if (err)
            fclose(err);
        return;
    }
    setvbuf(out, NULL, isatty(1) ? _IOLBF : _IOFBF, 0);
    setvbuf(err, NULL, _IONBF, 0);
    stdout = out;
    stderr = err;
}

FILE *cli_terminal_raw_stderr(void) { return raw_stderr ? raw_stderr : stderr; }
