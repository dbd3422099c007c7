/* The documentation against the code: every figure block of README.md and of the pages
 * in docs/ is what its command prints today (docs/figures.sh writes them, make docs),
 * every link between the pages lands on a file and a heading that exist, the index lists
 * every page, the claims table has a row per claim scenario, and the README stays a
 * short front page. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/support/scratch.h"

#define MAX_PAGES 64

static char *pages[MAX_PAGES]; /* README.md, then the pages of docs/ in name order */
static int n_pages;
static char *dir;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void setup(void)
{
    dir = scratch_dir();
    n_pages = 0;
    pages[n_pages++] = strdup("README.md");
    DIR *d = opendir("docs");
    cr_assert_not_null(d, "run from the repository root");
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 3 && !strcmp(e->d_name + n - 3, ".md")) {
            cr_assert_lt(n_pages, MAX_PAGES);
            char path[512];
            snprintf(path, sizeof path, "docs/%s", e->d_name);
            pages[n_pages++] = strdup(path);
        }
    }
    closedir(d);
    qsort(pages + 1, (size_t)(n_pages - 1), sizeof pages[0], by_name);
}

static void teardown(void)
{
    for (int i = 0; i < n_pages; i++)
        free(pages[i]);
    scratch_remove_dir(dir);
}

TestSuite(docs, .init = setup, .fini = teardown, .timeout = 300);

/* text with every `from` replaced by `to` (malloc'd). */
static char *replace_all(const char *text, const char *from, const char *to)
{
    size_t nf = strlen(from), nt = strlen(to), count = 0;
    for (const char *p = text; (p = strstr(p, from)); p += nf)
        count++;
    char *out = malloc(strlen(text) + count * (nt > nf ? nt - nf : 0) + 1), *o = out;
    cr_assert_not_null(out);
    for (const char *p = text;;) {
        const char *hit = strstr(p, from);
        if (!hit) {
            strcpy(o, p);
            break;
        }
        memcpy(o, p, (size_t)(hit - p));
        o += hit - p;
        memcpy(o, to, nt);
        o += nt;
        p = hit + nf;
    }
    return out;
}

/* Runs of blanks made one, blanks at line ends dropped (in place): column widths of a
 * printed table may move when a longer name joins it; its figures may not. */
static void squeeze_blanks(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p == ' ' || *p == '\t') {
            char *q = p;
            while (*q == ' ' || *q == '\t')
                q++;
            if (*q != '\n' && *q != '\0' && o != s && o[-1] != '\n')
                *o++ = ' ';
            p = q - 1;
            continue;
        }
        *o++ = *p;
    }
    *o = '\0';
}

/* The block's expected text for a command's output, as docs/figures.sh writes it: the
 * output's trailing newlines become one, as the shell's $(...) leaves them. */
static char *block_text(const char *command, const char *output)
{
    size_t len = strlen(output);
    while (len > 0 && output[len - 1] == '\n')
        len--;
    size_t n = strlen(command) + len + 64;
    char *text = malloc(n);
    cr_assert_not_null(text);
    snprintf(text, n, "```console\n$ %s\n%.*s%s```\n", command, (int)len, output,
             len ? "\n" : "");
    return text;
}

Test(docs, every_figure_is_what_its_command_prints)
{
    char scratch_prefix[600];
    snprintf(scratch_prefix, sizeof scratch_prefix, "%s/", dir);
    int checked = 0, slow = 0;
    for (int i = 0; i < n_pages; i++) {
        char *page = scratch_read(pages[i]);
        cr_assert_not_null(page, "%s", pages[i]);
        for (char *p = page; (p = strstr(p, "<!-- figure")); p++) {
            if (p != page && p[-1] != '\n')
                continue;
            int is_slow = !strncmp(p, "<!-- figure slow: ", 18);
            if (!is_slow && strncmp(p, "<!-- figure: ", 13))
                continue;
            char *eol = strchr(p, '\n');
            cr_assert_not_null(eol, "%s: a figure marker ends the file", pages[i]);
            const char *start = p + (is_slow ? 18 : 13);
            cr_assert(eol - start > 4 && !strncmp(eol - 4, " -->", 4),
                      "%s: a figure marker does not end with ' -->': %.*s", pages[i],
                      (int)(eol - p), p);
            char command[2048];
            snprintf(command, sizeof command, "%.*s", (int)(eol - 4 - start), start);
            char *end = strstr(eol, "\n<!-- /figure -->");
            cr_assert_not_null(end, "%s: figure `%s` has no <!-- /figure --> line", pages[i],
                               command);
            char *found = strndup(eol + 1, (size_t)(end - eol));
            if (is_slow) { /* not rerun here: only its shape and its command line */
                char head[2100];
                snprintf(head, sizeof head, "```console\n$ %s\n", command);
                cr_expect(!strncmp(found, head, strlen(head)),
                          "%s: the slow figure's block does not start with `$ %s`", pages[i],
                          command);
                free(found);
                slow++;
                continue;
            }
            /* the binary of this build; files into a scratch folder, named back */
            char *run = replace_all(command, "build/fleetsim", FLEETSIM_BIN);
            char *run_here = replace_all(run, "out/docs/", scratch_prefix);
            char wrapped[4096];
            snprintf(wrapped, sizeof wrapped, "( %s )", run_here);
            char *out, *err;
            int status = scratch_run(wrapped, &out, &err);
            cr_expect_eq(status, 0, "%s: `%s` exited %d: %s", pages[i], command, status, err);
            char *output = replace_all(out ? out : "", scratch_prefix, "out/docs/");
            char *want = block_text(command, output);
            squeeze_blanks(want);
            squeeze_blanks(found);
            cr_expect_str_eq(found, want,
                             "%s: figure `%s` is not what the command prints now; "
                             "make docs rewrites it (then reread the prose around it)",
                             pages[i], command);
            checked++;
            free(want);
            free(output);
            free(out);
            free(err);
            free(run_here);
            free(run);
            free(found);
        }
        free(page);
    }
    cr_expect_geq(checked, 10, "found only %d checked figures (and %d slow ones)", checked,
                  slow);
}

/* GitHub's anchor of a heading: lowercase, letters, digits, '-' and '_' kept, spaces to
 * '-', everything else dropped. */
static void heading_anchor(const char *heading, size_t n, char *anchor, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++) {
        unsigned char c = (unsigned char)heading[i];
        if (isalnum(c) || c == '-' || c == '_')
            anchor[k++] = (char)tolower(c);
        else if (c == ' ')
            anchor[k++] = '-';
    }
    anchor[k] = '\0';
}

/* The line after the one at `line`, or NULL at the end. */
static const char *next_line(const char *line)
{
    const char *eol = strchr(line, '\n');
    return eol ? eol + 1 : NULL;
}

/* Whether the page has a heading whose anchor is `anchor` (duplicates get -1, -2, ...). */
static bool has_anchor(const char *page, const char *anchor)
{
    char seen[256][128];
    int n_seen = 0;
    bool fence = false;
    for (const char *line = page; line && *line; line = next_line(line)) {
        if (!strncmp(line, "```", 3))
            fence = !fence;
        if (fence || *line != '#')
            continue;
        const char *text = line;
        while (*text == '#')
            text++;
        while (*text == ' ')
            text++;
        const char *eol = strchr(text, '\n');
        char a[128];
        heading_anchor(text, eol ? (size_t)(eol - text) : strlen(text), a, sizeof a);
        int dup = 0;
        for (int i = 0; i < n_seen; i++)
            dup += !strcmp(seen[i], a);
        if (n_seen < 256)
            snprintf(seen[n_seen++], sizeof seen[0], "%s", a);
        char full[160];
        if (dup)
            snprintf(full, sizeof full, "%s-%d", a, dup);
        else
            snprintf(full, sizeof full, "%s", a);
        if (!strcmp(full, anchor))
            return true;
    }
    return false;
}

Test(docs, every_link_between_the_pages_lands_on_a_file_and_a_heading)
{
    int links = 0;
    for (int i = 0; i < n_pages; i++) {
        char *page = scratch_read(pages[i]);
        cr_assert_not_null(page);
        char folder[512];
        snprintf(folder, sizeof folder, "%s", pages[i]);
        char *slash = strrchr(folder, '/');
        if (slash)
            slash[1] = '\0';
        else
            folder[0] = '\0';
        bool fence = false;
        for (char *line = page; line && *line;) {
            char *eol = strchr(line, '\n');
            if (!strncmp(line, "```", 3))
                fence = !fence;
            for (char *p = line; !fence && (p = strstr(p, "](")) && (!eol || p < eol); p += 2) {
                char *close = strchr(p + 2, ')');
                if (!close || (eol && close > eol))
                    continue;
                char target[512];
                snprintf(target, sizeof target, "%.*s", (int)(close - p - 2), p + 2);
                if (strstr(target, "://") || !strncmp(target, "mailto:", 7))
                    continue;
                char *hash = strchr(target, '#');
                char anchor[256] = "";
                if (hash) {
                    snprintf(anchor, sizeof anchor, "%s", hash + 1);
                    *hash = '\0';
                }
                char path[1024];
                if (*target)
                    snprintf(path, sizeof path, "%s%s", folder, target);
                else
                    snprintf(path, sizeof path, "%s", pages[i]);
                struct stat st;
                cr_expect_eq(stat(path, &st), 0, "%s: link to %s: no such file", pages[i],
                             path);
                if (*anchor) {
                    char *linked = scratch_read(path);
                    cr_expect(linked && has_anchor(linked, anchor),
                              "%s: link to %s#%s: no such heading", pages[i], path, anchor);
                    free(linked);
                }
                links++;
            }
            line = eol ? eol + 1 : NULL;
        }
        free(page);
    }
    cr_expect_gt(links, 20, "found only %d links", links);
}

Test(docs, the_index_lists_every_page)
{
    char *index = scratch_read("docs/README.md");
    cr_assert_not_null(index, "docs/README.md is the index of docs/");
    for (int i = 1; i < n_pages; i++) {
        const char *name = pages[i] + strlen("docs/");
        if (!strcmp(name, "README.md"))
            continue;
        char link[256];
        snprintf(link, sizeof link, "](%s)", name);
        cr_expect(strstr(index, link) != NULL, "docs/README.md does not link to %s", name);
    }
    free(index);
    char *readme = scratch_read("README.md");
    cr_assert_not_null(readme);
    cr_expect(strstr(readme, "](docs/README.md)") != NULL, "README.md links to the index");
    free(readme);
}

Test(docs, the_readme_is_a_short_front_page)
{
    char *readme = scratch_read("README.md");
    cr_assert_not_null(readme);
    int lines = 0;
    for (const char *p = readme; (p = strchr(p, '\n')); p++)
        lines++;
    cr_expect_lt(lines, 250, "README.md has %d lines: move detail into docs/", lines);
    free(readme);
}

Test(docs, the_pages_cite_sources_not_folders_outside_the_repository)
{
    for (int i = 0; i < n_pages; i++) {
        char *page = scratch_read(pages[i]);
        cr_assert_not_null(page);
        cr_expect(!strstr(page, "shared/reference") && !strstr(page, "../shared"),
                  "%s cites a folder that is not in the repository", pages[i]);
        free(page);
    }
}

Test(docs, the_claims_table_has_a_row_per_claim_scenario)
{
    char *claims = scratch_read("docs/claims.md");
    cr_assert_not_null(claims);
    const char *begin = strstr(claims, "\n<!-- claims:begin");
    const char *end = strstr(claims, "\n<!-- claims:end -->");
    cr_assert(begin && end && begin < end, "docs/claims.md has no claims markers");
    DIR *d = opendir("scenarios/claims");
    cr_assert_not_null(d);
    struct dirent *e;
    int scenarios = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".lua") || !isdigit((unsigned char)e->d_name[0]))
            continue;
        char cell[300];
        snprintf(cell, sizeof cell, "`fleetsim run scenarios/claims/%s`", e->d_name);
        const char *row = strstr(begin, cell);
        cr_expect(row && row < end, "docs/claims.md has no row for %s: run make claims",
                  e->d_name);
        scenarios++;
    }
    closedir(d);
    cr_expect_geq(scenarios, 12);
    free(claims);
}

Test(docs, the_first_scenario_shown_is_the_example_file_it_names)
{
    char *example = scratch_read("docs/examples/my_chat.lua");
    cr_assert_not_null(example);
    const char *shown_in[] = { "README.md", "docs/tutorial.md" };
    for (size_t i = 0; i < sizeof shown_in / sizeof shown_in[0]; i++) {
        char *page = scratch_read(shown_in[i]);
        cr_assert_not_null(page, "%s", shown_in[i]);
        cr_expect(strstr(page, example) != NULL,
                  "%s's listing differs from docs/examples/my_chat.lua", shown_in[i]);
        free(page);
    }
    free(example);
}
