#include "output/plot_script.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "output/atomic_file.h"
#include "sim/array.h"

void plot_script_quote(FILE *out, const char *text)
{
    fputc('\'', out);
    for (const char *p = text; *p; p++) {
        if (*p == '\'')
            fputc('\'', out);
        if (*p == '\n' || *p == '\r')
            fputc(' ', out); /* a string cannot span lines */
        else
            fputc(*p, out);
    }
    fputc('\'', out);
}

void plot_script_head(FILE *out, const char *name, const char *source_csv,
                      const char *title, const char *xlabel, const char *ylabel)
{
    fprintf(out, "%s: %s, from %s.\n", PLOT_SCRIPT_MARK, title, source_csv);
    fprintf(out,
            "# Edit freely, then `fleetsim plot DIR` renders it again (SVG; PNG too with\n"
            "# --png or when plots/ holds PNGs) and rewrites report.html; or, in DIR:\n"
            "# gnuplot plots/%s.gp.  A new `fleetsim run` into DIR writes it anew.\n", name);
    fprintf(out, "if (!exists(\"term\")) term = \"%s\"\n", PLOT_TERM_SVG);
    fprintf(out, "if (!exists(\"out\")) out = 'plots/%s.svg'\n", name);
    fputs("set terminal @term noenhanced\n"
          "set output out\n"
          "set datafile separator ','\n"
          "set datafile missing NaN    # rows filtered out below: skipped, lines go on\n"
          "set grid\n"
          "set key below\n", out);
    fputs("set title ", out);
    plot_script_quote(out, title);
    fputs("\nset xlabel ", out);
    plot_script_quote(out, xlabel);
    fputs("\nset ylabel ", out);
    plot_script_quote(out, ylabel);
    fputc('\n', out);
}

void plot_script_name(char *buf, size_t size, const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p && n + 1 < size; p++) {
        char c = *p;
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '_' || (c == '.' && n > 0);
        buf[n++] = keep ? c : '_';
    }
    if (size > 0)
        buf[n] = '\0';
}

int plot_script_write(const char *dir, const char *name,
                      void (*write)(FILE *out, const void *context), const void *context,
                      char *err, size_t err_size)
{
    size_t n = strlen(dir) + sizeof "/plots";
    char *plots = malloc(n), file[512];
    if (!plots) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    snprintf(plots, n, "%s/plots", dir);
    snprintf(file, sizeof file, "%s.gp", name);
    atomic_file *f = output_make_inside(dir, "plots", err, err_size) == 0
                     ? atomic_file_open(plots, file, err, err_size) : NULL;
    free(plots);
    if (!f)
        return -1;
    write(atomic_file_stream(f), context);
    return atomic_file_commit(f, err, err_size);
}

int plot_list_add(plot_list *l, const char *name)
{
    char **grown = sim_array_try_grow(l->names, &l->capacity, l->count + 1, sizeof *grown,
                                      SIZE_MAX);
    if (!grown)
        return -1;
    l->names = grown;
    char *copy = strdup(name);
    if (!copy)
        return -1;
    l->names[l->count++] = copy;
    return 0;
}

bool plot_list_has(const plot_list *l, const char *name)
{
    for (size_t i = 0; i < l->count; i++)
        if (!strcmp(l->names[i], name))
            return true;
    return false;
}

void plot_list_release(plot_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->names[i]);
    free(l->names);
    l->names = NULL;
    l->count = l->capacity = 0;
}

int plot_script_emit(const char *dir, const char *name,
                     void (*write)(FILE *out, const void *context), const void *context,
                     plot_list *written, char *err, size_t err_size)
{
    if (plot_script_write(dir, name, write, context, err, err_size) != 0)
        return -1;
    if (plot_list_add(written, name) != 0) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    return 0;
}

bool plot_script_is_fleetsims(FILE *f)
{
    char line[64] = "";
    return f && fgets(line, sizeof line, f)
           && !strncmp(line, PLOT_SCRIPT_MARK, strlen(PLOT_SCRIPT_MARK));
}
