#include "scratch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

char *scratch_dir(void)
{
    char *dir = strdup("/tmp/fleetsim-test-XXXXXX");
    if (!dir || !mkdtemp(dir)) {
        perror("mkdtemp");
        abort();
    }
    return dir;
}

char *scratch_file(const char *dir, const char *name, const char *text)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        abort();
    }
    return path;
}

void scratch_remove_dir(char *dir)
{
    char command[512];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    if (system(command) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    free(dir);
}

char *scratch_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *text = malloc(cap);
    size_t got;
    while ((got = fread(text + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n < 2)
            text = realloc(text, cap *= 2);
    }
    text[n] = '\0';
    fclose(f);
    return text;
}

int scratch_run(const char *command, char **out, char **err)
{
    char *dir = scratch_dir();
    char full[4096];
    snprintf(full, sizeof full, "%s > '%s/out' 2> '%s/err'", command, dir, dir);
    int status = system(full);
    char path[512];
    snprintf(path, sizeof path, "%s/out", dir);
    *out = scratch_read(path);
    snprintf(path, sizeof path, "%s/err", dir);
    *err = scratch_read(path);
    scratch_remove_dir(dir);
    if (*err) {
        char *noise = scratch_take_sanitizer_lines(*err);
        if (*noise)
            fprintf(stderr, "[sanitizer output of `%s`]\n%s", command, noise);
        free(noise);
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* "==123==" at the start of a line: the sanitizer runtime's own prefix. */
static int sanitizer_prefixed(const char *line)
{
    if (line[0] != '=' || line[1] != '=')
        return 0;
    const char *p = line + 2;
    while (*p >= '0' && *p <= '9')
        p++;
    return p > line + 2 && p[0] == '=' && p[1] == '=';
}

static int all_equal_signs(const char *line, size_t n)
{
    if (n < 10)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (line[i] != '=')
            return 0;
    return 1;
}

char *scratch_take_sanitizer_lines(char *text)
{
    size_t n = strlen(text);
    char *taken = malloc(n + 1), *kept = text;
    size_t t = 0;
    int in_report = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
        size_t body = end ? len - 1 : len;
        int noise = in_report || sanitizer_prefixed(line) || all_equal_signs(line, body);
        if (sanitizer_prefixed(line) && strstr(line, "ERROR:") && strstr(line, "ERROR:") < line + body)
            in_report = 1;
        if (in_report && !strncmp(line, "SUMMARY:", 8))
            in_report = 0;
        if (noise) {
            memcpy(taken + t, line, len);
            t += len;
        } else {
            memmove(kept, line, len); /* kept never passes line */
            kept += len;
        }
        line += len;
    }
    *kept = '\0';
    taken[t] = '\0';
    return taken;
}

summary_row scratch_summary_row(const char *csv, const char *scope, const char *subject,
                                const char *metric)
{
    summary_row row = { 0 };
    char prefix[256];
    snprintf(prefix, sizeof prefix, "\n%s,%s,%s,", scope, subject, metric);
    const char *at = strstr(csv, prefix);
    if (!at)
        return row;
    /* value,unit,ci95_lo,ci95_hi,n: the interval is empty with one replication, and so
     * may the unit be */
    char *end;
    const char *p = at + strlen(prefix);
    row.value = strtod(p, &end);
    if (end == p || *end != ',')
        return row;
    p = strchr(end + 1, ',');
    if (!p)
        return row;
    row.ci_low = *++p == ',' ? NAN : strtod(p, &end);
    p = strchr(p, ',');
    if (!p)
        return row;
    row.ci_high = *++p == ',' ? NAN : strtod(p, &end);
    p = strchr(p, ',');
    if (!p)
        return row;
    row.n = strtod(p + 1, NULL);
    row.found = 1;
    return row;
}
