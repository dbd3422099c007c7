/* `fleetsim calibrate`: measure this machine's GPU (or CPU), fit, and write a profile
 * (Lua) beside its raw samples (CSV); or refit a samples file.  Prints the comparison
 * with the catalog on stdout, progress on stderr; exit 1 for a run-time failure (no
 * such device, an unwritable file, a failed kernel), 2 for bad usage or a bad samples
 * file. */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kernels/calib_bench.h"
#include "kernels/calib_ops.h"
#include "kernels/calib_profile.h"
#include "kernels/calib_steps.h"
#include "kernels/cuda_probe.h"
#include "lua/catalog.h"
#include "lua/cli.h"
#include "lua/cli_getopt.h"
#include "lua/profile_load.h"
#include "lua/steps_load.h"
#include "output/atomic_file.h"

const char cli_calibrate_usage[] =
    "usage: fleetsim calibrate [--device cuda[:N]|cpu] [--quick] [-o FILE.lua]\n"
    "       fleetsim calibrate --device cpu|cuda[:N] --model NAME|NAME:SHAPE [--operators-only]\n"
    "       fleetsim calibrate --steps STEPS.csv [--profile FILE.lua] [--holdout F]\n"
    "       fleetsim calibrate --refit SAMPLES.csv [-o FILE.lua]\n"
    "\n"
    "Measures what this machine's GPU (or, without one, its CPU) achieves: memory\n"
    "bandwidth over sizes, GEMM over shapes from decode-like to squares, launch latency,\n"
    "host-device copies and all-reduce; fits a profile a scenario or `fleetsim estimate\n"
    "--profile` uses instead of datasheet figures, and compares it with the catalog.\n"
    "\n"
    "  --device cuda[:N]|cpu  what to measure (default: CUDA device 0 if there is one)\n"
    "  --quick                fewer sizes and repeats (under a minute on a CPU)\n"
    "  -o, --output FILE.lua  the profile (default profile.lua, and SAMPLES.lua with\n"
    "                         --refit); its raw samples go beside it as FILE.csv\n"
    "  --refit SAMPLES.csv    fit again from recorded samples; measure nothing\n"
    "  --model NAME           also time a decoder layer's operators at this catalog model's\n"
    "                         shapes (or NAME:layers=L,hidden=H,heads=A,kv_heads=G,ffn=F,\n"
    "                         vocab=V) and fit the profile's operator table (a CPU's in\n"
    "                         fp32, a CUDA device's in bf16; default --device cpu)\n"
    "  --operators-only       with --model: skip the device series (bandwidth, GEMM squares)\n"
    "  --steps STEPS.csv      fit a real engine's measured step times (docs/calibration.md)\n"
    "                         to engine-level parameters; measure nothing\n"
    "  --profile FILE.lua     with --steps: the profile to start from (default: the device's\n"
    "                         datasheet family)\n"
    "  --holdout F            with --steps: the share of rows held out of the fit and only\n"
    "                         predicted (default 0.25: every 4th row)\n"
    "  --catalog NAME         the catalog entry to compare with (default: by name)\n"
    "  --threads N            CPU: at most N threads (default: every core)\n"
    "  -q, --quiet            no progress lines\n";

typedef struct calibrate_options {
    const char *device, *output, *refit, *catalog_name, *model, *steps, *profile;
    calib_options bench;
    bool quiet, operators_only;
    double holdout;
} calibrate_options;

static int parse_options(int argc, char **argv, calibrate_options *o)
{
    enum { O_DEVICE = 256, O_QUICK, O_REFIT, O_CATALOG, O_THREADS, O_MODEL, O_OPS_ONLY,
           O_STEPS, O_PROFILE, O_HOLDOUT };
    static const struct option options[] = {
        { "device", required_argument, NULL, O_DEVICE }, { "quick", no_argument, NULL, O_QUICK },
        { "output", required_argument, NULL, 'o' }, { "refit", required_argument, NULL, O_REFIT },
        { "catalog", required_argument, NULL, O_CATALOG },
        { "threads", required_argument, NULL, O_THREADS },
        { "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' },
        { "model", required_argument, NULL, O_MODEL },
        { "operators-only", no_argument, NULL, O_OPS_ONLY },
        { "steps", required_argument, NULL, O_STEPS },
        { "profile", required_argument, NULL, O_PROFILE },
        { "holdout", required_argument, NULL, O_HOLDOUT },
        { NULL, 0, NULL, 0 },
    };
    int opt;
    char *end;
    o->holdout = 0.25;
    bool holdout_given = false;
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
        case O_MODEL: o->model = optarg; break;
        case O_OPS_ONLY: o->operators_only = true; break;
        case O_STEPS: o->steps = optarg; break;
        case O_PROFILE: o->profile = optarg; break;
        case O_HOLDOUT:
            holdout_given = true;
            o->holdout = strtod(optarg, &end);
            if (!*optarg || *end || !(o->holdout >= 0 && o->holdout <= 0.5)) {
                fprintf(stderr, "fleetsim calibrate: --holdout expects a share from 0 to 0.5, "
                        "got '%s'\n", optarg);
                return -1;
            }
            break;
        case 'h': fputs(cli_calibrate_usage, stdout); return 1;
        default: /* ':' or '?' */
            cli_getopt_refused("calibrate", opt, argv, options);
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
    if ((o->refit || o->steps) && (o->device || o->model)) {
        fprintf(stderr, "fleetsim calibrate: --%s measures nothing; leave out --device and "
                "--model\n", o->refit ? "refit" : "steps");
        return -1;
    }
    if (o->refit && o->steps) {
        fprintf(stderr, "fleetsim calibrate: --refit and --steps are two different fits; "
                "give one\n");
        return -1;
    }
    if ((o->profile && !o->steps) || (o->operators_only && !o->model)
        || (holdout_given && !o->steps)) {
        fprintf(stderr, "fleetsim calibrate: %s\n", o->profile ? "--profile goes with --steps"
                : o->operators_only && !o->model ? "--operators-only goes with --model"
                : "--holdout goes with --steps");
        return -1;
    }
    if (o->output && !*o->output) {
        fprintf(stderr, "fleetsim calibrate: -o expects a file name, got an empty name\n");
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

/* The folder of path, made (with its parents) when missing: before anything is
 * measured, so that a minute of samples is never lost to a missing folder.  0, or -1
 * after saying why. */
static int ensure_folder(const char *path)
{
    char dir[4096];
    const char *name;
    split_path(path, dir, sizeof dir, &name);
    for (char *p = dir + 1;; p++) {
        char c = *p;
        if (c != '/' && c != '\0')
            continue;
        *p = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "fleetsim calibrate: cannot create the folder '%s' for '%s': %s "
                    "(nothing measured)\n", dir, path, strerror(errno));
            return -1;
        }
        *p = c;
        if (!c)
            break;
    }
    if (access(dir, W_OK) != 0) {
        fprintf(stderr, "fleetsim calibrate: cannot write into '%s' for '%s': %s (nothing "
                "measured)\n", dir, path, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- --steps: a real engine's step times ------------------------------------------------ */

typedef struct steps_job {
    const device_profile *p;
    const perf_profile *fitted;
    const calib_steps_fit *fit;
    const char *file;
} steps_job;

static int write_steps_lua(FILE *out, const void *what)
{
    const steps_job *j = what;
    const device_profile *p = j->p;
    fprintf(out, "-- Fitted to measured steps by `fleetsim calibrate --steps %s`.\n", j->file);
    fprintf(out, "return {\n  format = 1,\n  device = \"%s\", kind = \"%s\", catalog = \"%s\",\n",
            p->device, p->kind, p->catalog);
    fprintf(out, "  host = \"%s\", date = \"%s\",\n  achieved = {\n    flops = {", p->host, p->date);
    for (int i = 0; i < PREC_COUNT; i++)
        if (p->flops[i] > 0)
            fprintf(out, " %s = %.6g,", precision_name((precision)i), p->flops[i]);
    fprintf(out, " },\n");
    if (p->bandwidth_bytes_per_s > 0)
        fprintf(out, "    bandwidth_bytes_per_s = %.6g,\n", p->bandwidth_bytes_per_s);
    if (p->launch_s > 0)
        fprintf(out, "    launch_s = %.6g,\n", p->launch_s);
    if (p->memory_bytes > 0)
        fprintf(out, "    memory_bytes = %.6g,\n", p->memory_bytes);
    fprintf(out, "  },\n");
    if (calib_ops_write_lua(out, &j->fitted->operators, p->operators_precision,
                            p->operators_model, p->spread, NULL, j->fit, j->file) != 0)
        return -1;
    fprintf(out, "}\n");
    return ferror(out) ? -1 : 0;
}

static void print_stats(const char *what, const calib_steps_stats *s)
{
    if (s->n)
        printf("  %-28s %4zu rows  r2 %.4f  rms %5.1f%%  mean |error| %5.1f%%  worst %+6.1f%%\n",
               what, s->n, s->r2, 100 * s->rms_rel, 100 * s->mean_abs_rel, 100 * s->worst_rel);
}

/* Each parameter with its standard error, or why the profile's value was kept. */
static void print_parameters(const calib_steps_fit *fit)
{
    static const char *const what[CALIB_STEPS_NPARAMS] = {
        "host work per iteration", "host work per sequence", "GEMM compute share",
        "GEMM weight-stream share", "prefill attention share", "decode attention share",
        "memory passes share", "dispatch per kernel",
    };
    static const double unit[CALIB_STEPS_NPARAMS] = { 1e3, 1e3, 1, 1, 1, 1, 1, 1e6 };
    static const char *const unit_name[CALIB_STEPS_NPARAMS] = { " ms", " ms", "", "", "", "",
                                                                "", " us" };
    double v[CALIB_STEPS_NPARAMS];
    calib_steps_params_get(&fit->found, v);
    printf("engine parameters (shares of the operator table's efficiencies; +- one standard "
           "error):\n");
    for (int k = 0; k < CALIB_STEPS_NPARAMS; k++) {
        printf("  %-26s ", what[k]);
        if (fit->state[k] == CALIB_PARAM_FITTED)
            printf("%.4g%s +- %.2g\n", unit[k] * v[k], unit_name[k], unit[k] * fit->se[k]);
        else
            printf("%.4g%s: %s; the profile's value kept\n", unit[k] * v[k], unit_name[k],
                   fit->state[k] == CALIB_PARAM_AT_BOUND
                       ? "not determined (it ran to its bound)"
                       : "not determined by these rows (its error exceeded it)");
    }
}

/* Whether the fitted engine was kept, and on what evidence. */
static void print_verdict(const calib_steps_fit *fit)
{
    const calib_steps_cv *cv = &fit->cv;
    if (cv->folds >= 2)
        printf("  leaving one model out (%zu folds, %zu rows): fitted %.1f%%, operator table "
               "alone %.1f%% mean |error|\n", cv->folds, cv->n, 100 * cv->fitted_mae,
               100 * cv->profile_mae);
    if (fit->accepted && cv->folds < 2 && !fit->held_out.n)
        printf("\nthe fitted engine is kept, unchecked: no rows were held out, and no "
               "model could be left out (one model, or too few rows without it)\n");
    else if (fit->accepted)
        printf("\nthe fitted engine is kept: it predicts %s better than the operator table "
               "alone\n", cv->folds >= 2 ? "the models it was not fitted to"
                                          : "the held-out rows");
    else
        printf("\nthe fitted engine is NOT kept: it predicts %s no better than the operator "
               "table alone,\nso the profile written holds the table's values (no host work, "
               "every share 1)\n", cv->folds >= 2 ? "the models it was not fitted to"
                                                   : "the held-out rows");
}

static int calibrate_steps(const calibrate_options *o, const catalog *cat, const char *output)
{
    char err[1024];
    device_profile start;
    profile_init(&start);
    if (o->profile && profile_load_file(o->profile, &start, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim calibrate: --profile: %s\n", err);
        return CLI_EXIT_BAD_INPUT;
    }
    steps_file f;
    if (steps_load(o->steps, cat, o->profile ? &start : NULL, &f, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim calibrate: %s\n", err);
        steps_release(&f);
        return CLI_EXIT_BAD_INPUT;
    }
    calib_steps_hold_out(f.rows, f.count, o->holdout);
    size_t kept = 0;
    for (size_t i = 0; i < f.count; i++)
        kept += !f.rows[i].held_out;
    if (kept < CALIB_STEPS_MIN_ROWS) {
        fprintf(stderr, "fleetsim calibrate: %s: %zu rows, %zu left to fit after holding out "
                "%g of them (--holdout); the fit needs %d: measure at least %zu step shapes, "
                "or lower --holdout\n", o->steps, f.count, kept, o->holdout,
                CALIB_STEPS_MIN_ROWS, calib_steps_rows_needed(o->holdout));
        steps_release(&f);
        return CLI_EXIT_BAD_INPUT;
    }
    calib_steps_fit fit;
    perf_profile fitted;
    if (calib_steps_fit_rows(f.rows, f.count, &f.perf, &fit, &fitted, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim calibrate: %s: %s\n", o->steps, err);
        steps_release(&f);
        return CLI_EXIT_BAD_INPUT;
    }
    if (!o->profile) { /* a profile of the engine on the file's device, from its datasheet */
        snprintf(start.device, sizeof start.device, "%s", f.device_name);
        snprintf(start.kind, sizeof start.kind, "%s", f.device.is_cpu ? "cpu" : "gpu");
        snprintf(start.catalog, sizeof start.catalog, "%s", f.device.name);
        start.operators_precision = f.rows[0].weights;
    }
    start.perf.has_operators = true;
    calib_meta meta = { 0 };
    stamp(&meta);
    snprintf(start.host, sizeof start.host, "%s", meta.host);
    snprintf(start.date, sizeof start.date, "%s", meta.date);
    /* the fitted table's references are the device figures it was fitted at */
    fitted.operators.peak_flops = device_peak_flops(&f.device, start.operators_precision, NULL);
    fitted.operators.bandwidth_bytes_per_s = f.device.bandwidth_bytes_per_s;
    printf("%s: %zu steps on %s (%s), %zu held out%s\n\n", o->steps, f.count, f.device_name,
           f.device.name, fit.held_out.n, o->profile ? "" : "; from the datasheet family");
    print_parameters(&fit);
    printf("\npredicted / measured - 1:\n");
    print_stats("operator table alone (fit)", &fit.before);
    print_stats("fitted rows", &fit.train);
    print_stats("operator table alone (held)", &fit.held_out_before);
    print_stats("held-out rows", &fit.held_out);
    print_verdict(&fit);
    steps_job job = { &start, &fitted, &fit, o->steps };
    int status = 0;
    if (ensure_folder(output) != 0 || write_file(output, write_steps_lua, &job) != 0)
        status = CLI_EXIT_RUN_FAILURE;
    else
        printf("\nprofile: %s\n", output);
    steps_release(&f);
    return status;
}

/* ---- --model: the operator table ----------------------------------------------------------- */

static void print_ops(const calib_ops_result *ops, const char *model)
{
    const perf_family *t = &ops->table;
    printf("\noperators of %s (references: %.4g GFLOP/s, %.4g GB/s weight stream):\n", model,
           t->peak_flops / 1e9, t->bandwidth_bytes_per_s / 1e9);
    printf("  gemm: efficiency %.3f, tokens_half %.3g, weight stream %.3f", t->gemm.efficiency,
           t->gemm.tokens_half, t->gemm.bandwidth_efficiency);
    if (t->gemm.vector_bandwidth_efficiency > 0)
        printf(" (one token: %.3f)", t->gemm.vector_bandwidth_efficiency);
    printf(", overlap %.2f, floor %.3g us\n", t->gemm.overlap, 1e6 * t->gemm.floor_s);
    printf("  attention decode: bandwidth %.3f, width_half %.3g, floor %.3g us, %.3g us a "
           "sequence x kv head, ", t->attn_decode.efficiency, t->attn_decode.width_half,
           1e6 * t->attn_decode.floor_s, 1e6 * t->attn_decode.per_head_s);
    if (t->attn_decode.score_accesses > 0)
        printf("%.3g accesses to each score (x/ %.2f)", t->attn_decode.score_accesses,
               exp(ops->score_log_se));
    else if (isnan(ops->score_log_se))
        printf("scores not fitted (one query group, or under 8 shapes)");
    else
        printf("scores not determined by the samples (x/ %.3g): left out",
               exp(ops->score_log_se));
    printf("; prefill: %.3f of the peak\n", t->attn_prefill.new_efficiency);
    printf("fits (relative error over the shapes; spread: of the repeats, q3 - q1 over the "
           "median):\n");
    for (size_t i = 0; i < ops->nfits; i++)
        printf("  %-20s %3zu shapes  rms %5.1f%%  worst %5.1f%%  spread %5.1f%%\n",
               ops->fits[i].what, ops->fits[i].points, 100 * ops->fits[i].rms_rel,
               100 * ops->fits[i].worst_rel, 100 * ops->fits[i].spread);
    if (!(ops->memory_bytes_per_s > 0))
        printf("streams not checked against the memory's bandwidth: none measured with "
               "these samples\n");
    else if (ops->nceilings)
        printf("faster than memory (%.4g GB/s measured):\n", ops->memory_bytes_per_s / 1e9);
    for (size_t i = 0; i < ops->nceilings; i++) {
        const calib_ops_ceiling *c = &ops->ceilings[i];
        double gbs = c->efficiency * t->bandwidth_bytes_per_s / 1e9;
        if (c->capped)
            printf("  %-22s %.4g GB/s, its largest shape %.3g MB, %s: capped at the memory's\n",
                   c->what, gbs, c->largest_bytes / 1e6,
                   ops->cache_bytes > 0 ? "beyond the last-level cache" : "the cache's size "
                                                                          "not known");
        else
            printf("  %-22s %.4g GB/s: its largest shape, %.3g MB, fits in the %.3g MB "
                   "last-level cache\n", c->what, gbs, c->largest_bytes / 1e6,
                   ops->cache_bytes / 1e6);
    }
}

/* The device series of samples (the op_ ones apart). */
static int device_series(const calib_samples *all, calib_samples *out)
{
    for (size_t i = 0; i < all->count; i++)
        if (strncmp(all->items[i].kind, "op_", 3) && calib_samples_add(out, &all->items[i]) != 0)
            return -1;
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
    if (o.steps) {
        int status = calibrate_steps(&o, &cat, output);
        catalog_release(&cat);
        return status;
    }
    model_spec shaped = { 0 };
    const model_spec *model = NULL;
    if (o.model) {
        model = strchr(o.model, ':') ? NULL : catalog_model(&cat, o.model);
        if (!model && steps_parse_shape(o.model, &shaped, err, sizeof err) == 0)
            model = &shaped;
        if (!model) {
            fprintf(stderr, "fleetsim calibrate: --model: %s\n", strchr(o.model, ':') ? err
                    : "not a catalog model (or give NAME:layers=L,hidden=H,heads=A,kv_heads=G,"
                      "ffn=F,vocab=V)");
            catalog_release(&cat);
            return CLI_EXIT_BAD_INPUT;
        }
        if (!o.device)
            o.device = "cpu";
    }
    bool ops_on_cuda = model && strncmp(o.device, "cuda", 4) == 0;
    if (ops_on_cuda && o.operators_only) { /* measure() checks the device otherwise */
        char why[512];
        int count = kernels_cuda_device_count(why, sizeof why);
        if (count <= o.bench.cuda_device) {
            if (count)
                snprintf(why, sizeof why, "there %s %d", count == 1 ? "is" : "are", count);
            fprintf(stderr, "fleetsim calibrate: --device %s: no such CUDA device (%s); nothing "
                    "measured\n", o.device, why);
            model_release(&shaped);
            catalog_release(&cat);
            return CLI_EXIT_RUN_FAILURE;
        }
    }
    if (ensure_folder(output) != 0 || (!o.refit && ensure_folder(samples_path) != 0)) {
        model_release(&shaped);
        catalog_release(&cat);
        return CLI_EXIT_RUN_FAILURE;
    }
    calib_samples samples = { 0 }, device = { 0 };
    calib_meta meta = { 0 };
    calib_result *r = calloc(1, sizeof *r);
    calib_ops_result *ops = calloc(1, sizeof *ops);
    int status = r && ops ? 0 : CLI_EXIT_RUN_FAILURE;
    if (status == 0 && o.refit) {
        if (calib_samples_read(o.refit, &meta, &samples, err, sizeof err) != 0) {
            fprintf(stderr, "fleetsim calibrate: %s\n", err);
            status = CLI_EXIT_BAD_INPUT;
        }
    } else if (status == 0) {
        stamp(&meta);
        if (!o.operators_only)
            status = measure(&o, &samples, &meta);
        if (status == 0 && model && ops_on_cuda) {
            snprintf(meta.model, sizeof meta.model, "%s", model->name); /* for --refit */
            if (calib_ops_cuda_run(&o.bench, model, &samples, &meta, err, sizeof err) != 0) {
                fprintf(stderr, "fleetsim calibrate: operators: %s\n", err);
                status = CLI_EXIT_RUN_FAILURE;
            }
        } else if (status == 0 && model) {
            if (o.operators_only) { /* the device series' run names the device otherwise */
                snprintf(meta.kind, sizeof meta.kind, "cpu");
                meta.memory_bytes = calib_cpu_memory_bytes();
                meta.cache_bytes = calib_cpu_cache_bytes();
                meta.threads = o.bench.threads ? o.bench.threads : 1;
                FILE *cpu = fopen("/proc/cpuinfo", "r");
                char line[256];
                snprintf(meta.device, sizeof meta.device, "cpu");
                while (cpu && fgets(line, sizeof line, cpu))
                    if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
                        snprintf(meta.device, sizeof meta.device, "%s", strchr(line, ':') + 2);
                        meta.device[strcspn(meta.device, "\n")] = 0;
                        break;
                    }
                if (cpu)
                    fclose(cpu);
            }
            snprintf(meta.model, sizeof meta.model, "%s", model->name); /* for --refit */
            if (calib_ops_cpu_run(&o.bench, model, &samples, err, sizeof err) != 0) {
                fprintf(stderr, "fleetsim calibrate: operators: %s\n", err);
                status = CLI_EXIT_RUN_FAILURE;
            }
        }
    }
    const device_spec *datasheet = NULL;
    bool with_ops = status == 0 && calib_ops_present(&samples);
    if (status == 0 && device_series(&samples, &device) != 0)
        status = CLI_EXIT_RUN_FAILURE;
    if (status == 0) {
        datasheet = match_catalog(&cat, &meta, o.catalog_name, note, sizeof note);
        if (device.count == 0 && with_ops) { /* operators alone: the profile names the device */
            profile_init(&r->profile);
            snprintf(r->profile.device, sizeof r->profile.device, "%s", meta.device);
            snprintf(r->profile.kind, sizeof r->profile.kind, "%s", meta.kind);
            snprintf(r->profile.catalog, sizeof r->profile.catalog, "%s",
                     datasheet ? datasheet->name : "");
            snprintf(r->profile.host, sizeof r->profile.host, "%s", meta.host);
            snprintf(r->profile.date, sizeof r->profile.date, "%s", meta.date);
            r->profile.memory_bytes = meta.memory_bytes;
        } else if (calib_result_build(&device, &meta, datasheet, r, err, sizeof err) != 0) {
            fprintf(stderr, "fleetsim calibrate: %s%s\n", o.refit ? "refitting: " : "", err);
            status = o.refit ? CLI_EXIT_BAD_INPUT : CLI_EXIT_RUN_FAILURE;
        }
    }
    if (status == 0 && with_ops) {
        device_spec cpu = { 0 };
        cpu.is_cpu = strcmp(meta.kind, "gpu") != 0;
        const perf_family *fallback = perf_family_of(datasheet ? datasheet : &cpu);
        if (calib_ops_fit_all(&samples, fallback, ops, err, sizeof err) != 0) {
            fprintf(stderr, "fleetsim calibrate: operators: %s\n", err);
            status = o.refit ? CLI_EXIT_BAD_INPUT : CLI_EXIT_RUN_FAILURE;
        } else { /* judged by the device series' bandwidth, else the tool's copy */
            double memory = r->profile.bandwidth_bytes_per_s > 0 ? r->profile.bandwidth_bytes_per_s
                                                                  : meta.copy_bytes_per_s;
            calib_ops_check_ceilings(ops, &samples, meta.cache_bytes, memory);
        }
        r->ops = ops;
        r->ops_precision = cpu.is_cpu ? PREC_FP32 : PREC_FP16;
        r->ops_model = model ? model->name : meta.model; /* a refit: the samples' */
    }
    const char *samples_name = strrchr(samples_path, '/') ? strrchr(samples_path, '/') + 1
                                                          : samples_path;
    csv_job csv = { &meta, &samples };
    lua_job lua = { r, &meta, datasheet, samples_name };
    if (!o.refit && samples.count && write_file(samples_path, write_csv, &csv) != 0) {
        /* the folder went away while measuring: keep the samples somewhere */
        char keep[] = "/tmp/fleetsim-calibrate-samples-XXXXXX";
        int fd = mkstemp(keep);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (f && calib_samples_write(f, &meta, &samples) == 0 && fclose(f) == 0)
            fprintf(stderr, "fleetsim calibrate: the samples are kept in %s (fleetsim "
                    "calibrate --refit %s -o FILE.lua)\n", keep, keep);
        else if (f)
            fclose(f);
        status = CLI_EXIT_RUN_FAILURE;
    }
    if (status == 0 && write_file(output, write_lua, &lua) != 0)
        status = CLI_EXIT_RUN_FAILURE;
    if (status == 0) {
        if (device.count)
            calib_result_print(stdout, r, &meta, datasheet, note);
        if (with_ops)
            print_ops(ops, model ? model->name : *meta.model ? meta.model : "the samples' model");
        printf("\nprofile: %s\nsamples: %s\n", output, samples_path);
    }
    free(r);
    free(ops);
    calib_samples_release(&samples);
    calib_samples_release(&device);
    model_release(&shaped);
    catalog_release(&cat);
    return status;
}
