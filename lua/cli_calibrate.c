/* `fleetsim calibrate`: measure this machine's GPU (or CPU), fit, and write a profile
 * (Lua) beside its raw samples (CSV); or refit a samples file.  Prints the comparison
 * with the catalog on stdout, progress on stderr; exit 1 for a run-time failure (no
 * such device, an unwritable file, a failed kernel), 2 for bad usage or a bad samples
 * file. */

#include <ctype.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernels/calib_bench.h"
#include "kernels/calib_profile.h"
#include "kernels/cuda_probe.h"
#include "lua/catalog.h"
#include "lua/cli.h"
#include "output/atomic_file.h"

const char cli_calibrate_usage[] =
    "usage: fleetsim calibrate [--device cuda[:N]|cpu] [--quick] [-o FILE.lua]\n"
    "       fleetsim calibrate --refit SAMPLES.csv [-o FILE.lua]\n"
    "\n"
    "Measures what this machine's GPU (or, without one, its CPU) achieves: memory\n"
    "bandwidth over sizes, GEMM over shapes from decode-like to squares, launch latency,\n"
    "host-device copies and all-reduce; fits a profile a scenario or `fleetsim estimate\n"
    "--profile` uses instead of datasheet figures, and compares it with the catalog.\n"
    "\n"
    "  --device cuda[:N]|cpu  what to measure (default: CUDA device 0 if there is one)\n"
    "  --quick                fewer sizes and repeats (under a minute on a CPU)\n"
    "  -o, --output FILE.lua  the profile (default profile.lua); its raw samples go\n"
    "                         beside it as FILE.csv\n"
    "  --refit SAMPLES.csv    fit again from recorded samples; measure nothing\n"
    "  --catalog NAME         the catalog entry to compare with (default: by name)\n"
    "  --threads N            CPU: at most N threads (default: every core)\n"
    "  -q, --quiet            no progress lines\n";

typedef struct calibrate_options {
    const char *device, *output, *refit, *catalog_name;
    calib_options bench;
    bool quiet;
} calibrate_options;

static int parse_options(int argc, char **argv, calibrate_options *o)
{
    enum { O_DEVICE = 256, O_QUICK, O_REFIT, O_CATALOG, O_THREADS };
    static const struct option options[] = {
        { "device", required_argument, NULL, O_DEVICE }, { "quick", no_argument, NULL, O_QUICK },
        { "output", required_argument, NULL, 'o' }, { "refit", required_argument, NULL, O_REFIT },
        { "catalog", required_argument, NULL, O_CATALOG },
        { "threads", required_argument, NULL, O_THREADS },
        { "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int opt;
    char *end;
    opterr = 0;
    optind = 2;
    while ((opt = getopt_long(argc, argv, ":o:qh", options, NULL)) != -1) {
        switch (opt) {
        case O_DEVICE: o->device = optarg; break;
        case O_QUICK: o->bench.quick = true; break;
        case 'o': o->output = optarg; break;
        case O_REFIT: o->refit = optarg; break;
        case O_CATALOG: o->catalog_name = optarg; break;
        case O_THREADS: {
            long n = strtol(optarg, &end, 10);
            if (!*optarg || *end || n < 1 || n > 256) {
                fprintf(stderr, "fleetsim calibrate: --threads expects a whole number from 1 to "
                        "256, got '%s'\n", optarg);
                return -1;
            }
            o->bench.threads = (unsigned)n;
            break;
        }
        case 'q': o->quiet = true; break;
        case 'h': fputs(cli_calibrate_usage, stdout); return 1;
        case ':':
            fprintf(stderr, "fleetsim calibrate: %s needs a value\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "fleetsim calibrate: unknown option '%s' (see fleetsim help "
                    "calibrate)\n", argv[optind - 1]);
            return -1;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "fleetsim calibrate: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (o->device && strcmp(o->device, "cpu") && strcmp(o->device, "cuda")
        && strncmp(o->device, "cuda:", 5)) {
        fprintf(stderr, "fleetsim calibrate: --device expects cuda, cuda:N or cpu, got '%s'\n",
                o->device);
        return -1;
    }
    if (o->device && !strncmp(o->device, "cuda:", 5)) {
        long n = strtol(o->device + 5, &end, 10);
        if (!o->device[5] || *end || n < 0 || n > 1023) {
            fprintf(stderr, "fleetsim calibrate: --device cuda:N expects a device index, got "
                    "'%s'\n", o->device);
            return -1;
        }
        o->bench.cuda_device = (int)n;
    }
    if (o->refit && o->device) {
        fprintf(stderr, "fleetsim calibrate: --refit measures nothing; leave out --device\n");
        return -1;
    }
    o->bench.progress = o->quiet ? NULL : stderr;
    return 0;
}

/* ---- the catalog entry to compare with -------------------------------------------------- */

static void normalise(const char *in, char *out, size_t size)
{
    size_t n = 0;
    for (; *in && n + 1 < size; in++)
        if (isalnum((unsigned char)*in))
            out[n++] = (char)tolower((unsigned char)*in);
    out[n] = '\0';
}

/* Name tokens ("H200-SXM": "h200", "sxm") found in the device's name; the ones with
 * digits (model numbers) weigh double, and an exact match needs all of those. */
static int name_score(const char *entry, const char *device, bool *exact)
{
    char copy[128], token[64], norm_device[256];
    normalise(device, norm_device, sizeof norm_device);
    snprintf(copy, sizeof copy, "%s", entry);
    int score = 0, digit_tokens = 0, digit_found = 0;
    for (char *save, *t = strtok_r(copy, "-+ _", &save); t; t = strtok_r(NULL, "-+ _", &save)) {
        normalise(t, token, sizeof token);
        bool digits = strpbrk(token, "0123456789") != NULL, found = *token && strstr(norm_device, token);
        digit_tokens += digits;
        digit_found += digits && found;
        score += found ? (digits ? 2 : 1) : (!strcmp(token, "pcie") ? -1 : 0);
    }
    *exact = digit_tokens > 0 && digit_found == digit_tokens;
    return score;
}

static const device_spec *match_catalog(const catalog *cat, const calib_meta *meta,
                                        const char *forced, char *note, size_t note_size)
{
    *note = '\0';
    if (forced) {
        snprintf(note, note_size, " (as asked with --catalog)");
        return catalog_device(cat, forced);
    }
    bool cpu = strcmp(meta->kind, "gpu") != 0;
    const device_spec *best = NULL, *vendor = NULL;
    int best_score = 0;
    bool best_exact = false;
    char norm[256];
    normalise(meta->device, norm, sizeof norm);
    for (size_t i = 0; i < cat->ndevices; i++) {
        const device_spec *d = &cat->devices[i];
        if (d->is_cpu != cpu)
            continue;
        bool exact;
        int score = name_score(d->name, meta->device, &exact);
        if (score > best_score || (exact && !best_exact && score == best_score)) {
            best = d, best_score = score, best_exact = exact;
        }
        char family[64];
        normalise(d->name, family, sizeof family);
        if (cpu && ((strstr(norm, "amd") && strstr(family, "epyc"))
                    || (strstr(norm, "intel") && strstr(family, "xeon"))))
            vendor = d;
    }
    if (best && best_exact)
        return best;
    if (best) {
        snprintf(note, note_size, " (the closest by name: '%s' is not in the catalog, so the "
                 "shares compare different hardware)", meta->device);
        return best;
    }
    if (vendor) {
        snprintf(note, note_size, " (the catalog's CPU of the same maker: '%s' is not in the "
                 "catalog, so the shares compare different hardware)", meta->device);
        return vendor;
    }
    snprintf(note, note_size, " ('%s' matches no catalog entry; name one with --catalog)",
             meta->device);
    return NULL;
}

/* ---- files -------------------------------------------------------------------------------- */

/* "dir/x.lua" -> "dir/x" + suffix. */
static void replace_suffix(const char *path, const char *old, const char *suffix, char *out,
                           size_t size)
{
    size_t n = strlen(path), o = strlen(old);
    if (n > o && !strcmp(path + n - o, old))
        n -= o;
    snprintf(out, size, "%.*s%s", (int)n, path, suffix);
}

static void split_path(const char *path, char *dir, size_t dir_size, const char **name)
{
    const char *slash = strrchr(path, '/');
    *name = slash ? slash + 1 : path;
    snprintf(dir, dir_size, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (!*dir)
        snprintf(dir, dir_size, "/");
}

typedef int (*write_fn)(FILE *out, const void *what);

typedef struct lua_job {
    const calib_result *r;
    const calib_meta *meta;
    const device_spec *datasheet;
    const char *samples_name;
} lua_job;

typedef struct csv_job {
    const calib_meta *meta;
    const calib_samples *samples;
} csv_job;

static int write_lua(FILE *out, const void *what)
{
    const lua_job *j = what;
    return calib_result_write_lua(out, j->r, j->meta, j->datasheet, j->samples_name);
}

static int write_csv(FILE *out, const void *what)
{
    const csv_job *j = what;
    return calib_samples_write(out, j->meta, j->samples);
}

static int write_file(const char *path, write_fn write, const void *what)
{
    char dir[4096], err[512];
    const char *name;
    split_path(path, dir, sizeof dir, &name);
    atomic_file *f = atomic_file_open(dir, name, err, sizeof err);
    if (!f || write(atomic_file_stream(f), what) != 0) {
        if (f) {
            atomic_file_abort(f);
            snprintf(err, sizeof err, "cannot write '%s'", path);
        }
        fprintf(stderr, "fleetsim calibrate: %s\n", err);
        return -1;
    }
    if (atomic_file_commit(f, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim calibrate: %s\n", err);
        return -1;
    }
    return 0;
}

/* ---- the command ------------------------------------------------------------------------- */

static void stamp(calib_meta *meta)
{
    if (gethostname(meta->host, sizeof meta->host) != 0)
        snprintf(meta->host, sizeof meta->host, "unknown");
    meta->host[sizeof meta->host - 1] = '\0';
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(meta->date, sizeof meta->date, "%Y-%m-%dT%H:%M:%SZ", &utc);
}

/* Measures into samples and meta; the exit status. */
static int measure(calibrate_options *o, calib_samples *samples, calib_meta *meta)
{
    char why[512], err[1024];
    bool want_cuda = o->device && strncmp(o->device, "cuda", 4) == 0;
    bool want_cpu = o->device && !strcmp(o->device, "cpu");
    if (!want_cpu) {
        int count = kernels_cuda_device_count(why, sizeof why);
        if (count > 0 && o->bench.cuda_device >= count) {
            fprintf(stderr, "fleetsim calibrate: --device %s: there %s %d CUDA device%s\n",
                    o->device, count == 1 ? "is" : "are", count, count == 1 ? "" : "s");
            return CLI_EXIT_RUN_FAILURE;
        }
        if (count == 0 && want_cuda) {
            fprintf(stderr, "fleetsim calibrate: --device %s: no CUDA device to calibrate (%s); "
                    "--device cpu calibrates the CPU\n", o->device, why);
            return CLI_EXIT_RUN_FAILURE;
        }
        if (count == 0) {
            if (!o->quiet)
                fprintf(stderr, "fleetsim calibrate: no CUDA device (%s): calibrating the CPU\n",
                        why);
        } else if (calib_cuda_run(&o->bench, samples, meta, err, sizeof err) != 0) {
            fprintf(stderr, "fleetsim calibrate: %s\n", err);
            return CLI_EXIT_RUN_FAILURE;
        } else {
            return 0;
        }
    }
    if (calib_cpu_run(&o->bench, samples, meta, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim calibrate: %s\n", err);
        return CLI_EXIT_RUN_FAILURE;
    }
    return 0;
}

int cli_calibrate(int argc, char **argv)
{
    calibrate_options o = { 0 };
    int parsed = parse_options(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : CLI_EXIT_BAD_INPUT;
    char output[4096], samples_path[4096], err[1024], note[512];
    if (o.output)
        snprintf(output, sizeof output, "%s", o.output);
    else if (o.refit)
        replace_suffix(o.refit, ".csv", ".lua", output, sizeof output);
    else
        snprintf(output, sizeof output, "profile.lua");
    replace_suffix(output, ".lua", ".csv", samples_path, sizeof samples_path);
    if (o.refit)
        snprintf(samples_path, sizeof samples_path, "%s", o.refit);

    catalog cat;
    if (catalog_load(&cat, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim: %s\n", err);
        return CLI_EXIT_RUN_FAILURE;
    }
    if (o.catalog_name && !catalog_device(&cat, o.catalog_name)) {
        char names[1024];
        fprintf(stderr, "fleetsim calibrate: unknown device '%s' for --catalog (known: %s)\n",
                o.catalog_name, catalog_device_names(&cat, names, sizeof names));
        catalog_release(&cat);
        return CLI_EXIT_BAD_INPUT;
    }
    calib_samples samples = { 0 };
    calib_meta meta = { 0 };
    calib_result *r = calloc(1, sizeof *r);
    int status = r ? 0 : CLI_EXIT_RUN_FAILURE;
    if (status == 0 && o.refit) {
        if (calib_samples_read(o.refit, &meta, &samples, err, sizeof err) != 0) {
            fprintf(stderr, "fleetsim calibrate: %s\n", err);
            status = CLI_EXIT_BAD_INPUT;
        }
    } else if (status == 0) {
        stamp(&meta);
        status = measure(&o, &samples, &meta);
    }
    const device_spec *datasheet = NULL;
    if (status == 0) {
        datasheet = match_catalog(&cat, &meta, o.catalog_name, note, sizeof note);
        if (calib_result_build(&samples, &meta, datasheet, r, err, sizeof err) != 0) {
            fprintf(stderr, "fleetsim calibrate: %s%s\n", o.refit ? "refitting: " : "", err);
            status = o.refit ? CLI_EXIT_BAD_INPUT : CLI_EXIT_RUN_FAILURE;
        }
    }
    const char *samples_name = strrchr(samples_path, '/') ? strrchr(samples_path, '/') + 1
                                                          : samples_path;
    csv_job csv = { &meta, &samples };
    lua_job lua = { r, &meta, datasheet, samples_name };
    if (status == 0 && !o.refit && write_file(samples_path, write_csv, &csv) != 0)
        status = CLI_EXIT_RUN_FAILURE;
    if (status == 0 && write_file(output, write_lua, &lua) != 0)
        status = CLI_EXIT_RUN_FAILURE;
    if (status == 0) {
        calib_result_print(stdout, r, &meta, datasheet, note);
        printf("\nprofile: %s\nsamples: %s\n", output, samples_path);
    }
    free(r);
    calib_samples_release(&samples);
    catalog_release(&cat);
    return status;
}
