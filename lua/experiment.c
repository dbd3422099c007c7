/* Experiments: points, rounds of tasks, and the search's bisection (see experiment.h). */
#include "lua/experiment.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/sandbox.h"
#include "lua/scenario_load.h"
#include "sim/array.h"
#include "sim/fatal.h"
#include "sim/results_wire.h"

enum { TASK_OK = 0, TASK_FAILED = 1 };

static char *copy(const char *s)
{
    char *c = strdup(s);
    if (!c)
        sim_out_of_memory("out of memory planning an experiment");
    return c;
}

static void *allocate(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        sim_out_of_memory("out of memory planning an experiment");
    return p;
}

void experiment_point_label(const experiment *x, size_t point, char *buf, size_t size)
{
    const experiment_point *pt = &x->points[point];
    buf[0] = '\0';
    for (size_t k = 0; k < x->nkeys; k++) {
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s", k ? ", " : "", pt->sets[k]);
    }
    if (x->nkeys == 0)
        snprintf(buf, size, "the scenario");
}

/* A new point with the given values of x's keys. */
static experiment_point *add_point(experiment *x, const char *const *values)
{
    x->points = sim_array_grow(x->points, &x->capacity, x->npoints + 1, sizeof *x->points,
                               "an experiment's points");
    experiment_point *pt = &x->points[x->npoints++];
    memset(pt, 0, sizeof *pt);
    pt->values = allocate(x->nkeys, sizeof *pt->values);
    pt->sets = allocate(x->nkeys, sizeof *pt->sets);
    for (size_t k = 0; k < x->nkeys; k++) {
        size_t n = strlen(x->keys[k]) + strlen(values[k]) + 2;
        pt->values[k] = copy(values[k]);
        pt->sets[k] = allocate(n, 1);
        snprintf(pt->sets[k], n, "%s=%s", x->keys[k], values[k]);
    }
    sim_metrics_init(&pt->results.metrics);
    pt->objective = NAN;
    return pt;
}

/* Where messages about the values of key k come from: "mm.lua:3: sweep", "--sweep",
 * "mm.lua:9: search". */
static const char *origin_of(const experiment *x, size_t k)
{
    return x->spec.naxes ? x->spec.axes[k].origin : "search";
}

/* Lets go of the held point's scenario. */
static void drop_held(experiment *x)
{
    if (x->held < x->npoints && x->points[x->held].loaded) {
        scenario_release(&x->points[x->held].sc);
        x->points[x->held].loaded = false;
    }
    x->held = SIZE_MAX;
}

/* Loads point p's scenario from the source into pt->sc and holds it (the point held
 * before is let go); budget 0 is the sandbox's own limit.  The loader's status and
 * message. */
static int hold_point(experiment *x, size_t p, uint64_t budget, uint64_t *run, char *message,
                      size_t message_size)
{
    experiment_point *pt = &x->points[p];
    if (x->held == p)
        return 0;
    drop_held(x);
    const experiment_options *o = &x->options;
    const char **sets = allocate(o->nsets + x->nkeys, sizeof *sets);
    for (size_t i = 0; i < o->nsets; i++)
        sets[i] = o->sets[i];
    for (size_t k = 0; k < x->nkeys; k++)
        sets[o->nsets + k] = pt->sets[k];
    scenario_load_options lo = { .unsafe = o->unsafe, .sets = sets,
                                 .nsets = o->nsets + x->nkeys,
                                 .instruction_budget = budget, .instructions_run = run };
    int status = x->source ? scenario_source_load(x->source, &lo, &pt->sc, message, message_size)
                           : -1;
    if (!x->source)
        snprintf(message, message_size, "out of memory");
    free(sets);
    if (status == 0) {
        pt->loaded = true;
        x->held = p;
    }
    return status;
}

int experiment_hold(experiment *x, size_t p, char *err, size_t err_size)
{
    return hold_point(x, p, 0, NULL, err, err_size);
}

/* Loads point p to check it.  A mistake in one of its own values, reported by the loader
 * as "--set KEY=VALUE: ...", is said as coming from the sweep or search instead. */
static experiment_status load_point(experiment *x, size_t p, char *err, size_t err_size)
{
    experiment_point *pt = &x->points[p];
    const experiment_options *o = &x->options;
    /* every point runs the file again, unless it is reused: together they share one
     * budget */
    if (x->load_instructions + 10000 >= EXPERIMENT_LOAD_INSTRUCTIONS) { /* the hook's step */
        snprintf(err, err_size, "%s: loading %zu points ran the %.0f million Lua instructions "
                 "a sweep or search may spend loading its points", o->file, x->points_loaded,
                 (double)EXPERIMENT_LOAD_INSTRUCTIONS / 1e6);
        return EXPERIMENT_BAD_INPUT;
    }
    uint64_t left = EXPERIMENT_LOAD_INSTRUCTIONS - x->load_instructions, run = 0;
    char message[2048];
    int status = hold_point(x, p, left < SANDBOX_INSTRUCTION_LIMIT ? left : 0, &run, message,
                            sizeof message);
    x->load_instructions += run;
    x->points_loaded++;
    if (status == 0) {
        pt->duration_s = pt->sc.duration_s;
        pt->replications = pt->sc.replications;
        if (!x->name)
            x->name = copy(pt->sc.name);
        return EXPERIMENT_OK;
    }
    for (size_t k = 0; k < x->nkeys; k++) {
        char prefix[FIELD_PATH_MAX + 16];
        snprintf(prefix, sizeof prefix, "--set %s:", pt->sets[k]);
        if (!strncmp(message, prefix, strlen(prefix))) {
            char origin[FIELD_PATH_MAX + 16];
            if (x->spec.has_search)
                snprintf(origin, sizeof origin, "%ssearch", x->spec.search.where);
            else
                snprintf(origin, sizeof origin, "%s", origin_of(x, k));
            snprintf(err, err_size, "%s %s", origin, message + strlen("--set "));
            return EXPERIMENT_BAD_INPUT;
        }
    }
    char label[1024];
    experiment_point_label(x, p, label, sizeof label);
    if (x->nkeys)
        snprintf(err, err_size, "at %s %s: %s", x->spec.has_search ? "search probe" : "sweep point",
                 label, message);
    else
        snprintf(err, err_size, "%s", message);
    return EXPERIMENT_BAD_INPUT;
}

static void release_point(experiment_point *pt, size_t nkeys)
{
    for (size_t k = 0; k < nkeys; k++) {
        free(pt->values[k]);
        free(pt->sets[k]);
    }
    free(pt->values);
    free(pt->sets);
    if (pt->loaded)
        scenario_release(&pt->sc);
    pt->loaded = false;
    run_results_release(&pt->results);
    free(pt->samples);
}

/* The points of a sweep (or a search's grid): the cross product of its axes, the last
 * fastest, the zipped ones (sweep.zip) one axis together whose k-th point takes each
 * one's k-th value (issue 18, 10). */
static experiment_status plan_sweep(experiment *x, const sweep_axis *axes, size_t naxes,
                                    char *err, size_t err_size)
{
    size_t n = 1;
    const sweep_axis *first_zip = NULL;
    for (size_t k = 0; k < naxes; k++) {
        const sweep_axis *a = &axes[k];
        if (a->zip && first_zip) {
            if (a->nvalues != first_zip->nvalues) {
                snprintf(err, err_size, "%s.zip: its lists move together and must be as long: "
                         "%s has %zu values, %s %zu", a->origin, first_zip->key,
                         first_zip->nvalues, a->key, a->nvalues);
                return EXPERIMENT_BAD_INPUT;
            }
            continue;
        }
        if (a->zip)
            first_zip = a;
        if (a->nvalues > EXPERIMENT_MAX_POINTS / n) {
            snprintf(err, err_size, "%s: the %s has more than %u points", x->options.file,
                     x->spec.has_search ? "search's grid" : "sweep", EXPERIMENT_MAX_POINTS);
            return EXPERIMENT_BAD_INPUT;
        }
        n *= a->nvalues;
    }
    const char **values = allocate(naxes, sizeof *values);
    for (size_t i = 0; i < n; i++) {
        size_t rest = i, zip_index = 0;
        /* the last axis varies fastest; the zipped keys count once, at the first's place */
        for (size_t k = naxes; k-- > 0;) {
            const sweep_axis *a = &axes[k];
            if (a->zip && a != first_zip)
                continue;
            size_t j = rest % a->nvalues;
            rest /= a->nvalues;
            if (a == first_zip)
                zip_index = j;
            values[k] = a->values[j];
        }
        for (size_t k = 0; k < naxes; k++)
            if (axes[k].zip)
                values[k] = axes[k].values[zip_index];
        add_point(x, values);
    }
    free(values);
    experiment_status status = EXPERIMENT_OK;
    for (size_t i = 0; i < x->npoints && status == EXPERIMENT_OK; i++) {
        status = load_point(x, i, err, err_size);
        /* from the first point's cost, what loading them all would: refused at once
         * rather than after hours of loading (a file whose table is reused runs once) */
        double all = (double)x->load_instructions * (double)x->npoints;
        if (status == EXPERIMENT_OK && i == 0 && all > EXPERIMENT_LOAD_INSTRUCTIONS
            && !scenario_source_reused(x->source)) {
            snprintf(err, err_size, "%s: the %s has %zu points and loading one ran %.3g "
                     "million Lua instructions: all of them would run about %.3g million, over "
                     "the %.0f million a sweep may spend loading its points; sweep fewer points "
                     "or make the file cheaper to run", x->options.file,
                     x->spec.has_search ? "search's grid" : "sweep", x->npoints,
                     (double)x->load_instructions / 1e6, all / 1e6,
                     (double)EXPERIMENT_LOAD_INSTRUCTIONS / 1e6);
            status = EXPERIMENT_BAD_INPUT;
        }
    }
    return status;
}

static experiment_status add_probe(experiment *x, long long value, char *err, size_t err_size)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", value);
    const char *values[] = { text };
    add_point(x, values);
    return load_point(x, x->npoints - 1, err, err_size);
}

experiment_status experiment_plan(experiment *x, const experiment_options *options,
                                  experiment_spec *spec, char *err, size_t err_size)
{
    memset(x, 0, sizeof *x);
    x->options = *options;
    x->spec = *spec;
    x->held = SIZE_MAX;
    x->source = scenario_source_open(options->file);
    experiment_load_init(spec);
    if (x->spec.naxes && x->spec.has_search) {
        snprintf(err, err_size, "%s%s: a scenario takes a sweep or a search, not both",
                 x->spec.search.where, "search");
        return EXPERIMENT_BAD_INPUT;
    }
    if (x->spec.has_search && x->spec.search.ngrid) { /* every point of the grid */
        const search_spec *s = &x->spec.search;
        x->nkeys = s->ngrid;
        x->keys = allocate(x->nkeys, sizeof *x->keys);
        for (size_t k = 0; k < x->nkeys; k++)
            x->keys[k] = s->grid[k].key;
        return plan_sweep(x, s->grid, s->ngrid, err, err_size);
    }
    if (x->spec.has_search) {
        x->keys = allocate(1, sizeof *x->keys);
        x->keys[0] = x->spec.search.key;
        x->nkeys = 1;
        experiment_status status = add_probe(x, x->spec.search.low, err, err_size);
        if (status == EXPERIMENT_OK && x->spec.search.high != x->spec.search.low)
            status = add_probe(x, x->spec.search.high, err, err_size);
        return status;
    }
    x->nkeys = x->spec.naxes;
    x->keys = allocate(x->nkeys, sizeof *x->keys);
    for (size_t k = 0; k < x->nkeys; k++)
        x->keys[k] = x->spec.axes[k].key;
    if (x->nkeys)
        return plan_sweep(x, x->spec.axes, x->spec.naxes, err, err_size);
    add_point(x, NULL);
    return load_point(x, 0, err, err_size);
}

void experiment_release(experiment *x)
{
    drop_held(x);
    scenario_source_close(x->source);
    for (size_t i = 0; i < x->npoints; i++)
        release_point(&x->points[i], x->nkeys);
    free(x->points);
    free(x->keys);
    free(x->name);
    experiment_load_release(&x->spec);
    memset(x, 0, sizeof *x);
}

/* ---- rounds of tasks: (point, replication) ------------------------------------------ */

typedef struct task_round {
    experiment *x;
    size_t first, npoints;   /* points first .. first + npoints - 1 */
    size_t *offsets;         /* task number of each point's first replication, and the end */
    experiment_status failure;
} task_round;

typedef struct sample_sink {
    experiment_point *pt;
    unsigned replication;
} sample_sink;

static void locate(const task_round *r, size_t task, size_t *point, unsigned *replication)
{
    size_t i = 0;
    while (r->offsets[i + 1] <= task)
        i++;
    *point = r->first + i;
    *replication = (unsigned)(task - r->offsets[i]);
}

/* A worker's copy of the experiment, with the scenario and the Lua state its tasks
 * loaded, released as the worker exits. */
static void release_in_worker(void *context)
{
    task_round *r = context;
    experiment_release(r->x);
}

static void describe_task(void *context, size_t task, char *buf, size_t size)
{
    task_round *r = context;
    size_t p;
    unsigned rep;
    locate(r, task, &p, &rep);
    char label[1024];
    experiment_point_label(r->x, p, label, sizeof label);
    snprintf(buf, size, "replication %u of %s", rep + 1, label);
}

static void run_task(void *context, size_t task, sim_wire *out)
{
    task_round *r = context;
    size_t p;
    unsigned rep;
    locate(r, task, &p, &rep);
    experiment_point *pt = &r->x->points[p];
    run_options ro = { .replication_first = rep, .replication_count = 1 };
    run_results results;
    char err[2048];
    sim_wire packed = { 0 };
    /* the plan loaded it once to check it; here it is loaded where it runs */
    int status = hold_point(r->x, p, 0, NULL, err, sizeof err);
    if (status == 0)
        status = scenario_run(&pt->sc, &ro, &results, err, sizeof err);
    if (status == 0) {
        sim_wire_put_u64(&packed, results.events);
        status = sim_metrics_pack(&packed, &results.metrics, err, sizeof err);
        if (status == 0)
            sim_timeseries_pack(&packed, results.timeseries);
        run_results_release(&results);
    }
    sim_wire_put_u64(out, status == 0 ? TASK_OK : TASK_FAILED);
    if (status == 0)
        sim_wire_put_bytes(out, packed.data, packed.size);
    else
        sim_wire_put_string(out, err);
    sim_wire_release(&packed);
}

static void keep_sample(void *context, size_t index, double value)
{
    sample_sink *s = context;
    experiment_point *pt = s->pt;
    size_t reps = pt->replications;
    if (index >= pt->samples_metrics) { /* a row of reps values per metric */
        size_t old = pt->samples_metrics;
        pt->samples = sim_array_grow(pt->samples, &pt->samples_metrics, index + 1,
                                     reps * sizeof *pt->samples, "replication values");
        for (size_t i = old * reps; i < pt->samples_metrics * reps; i++)
            pt->samples[i] = NAN; /* none yet */
    }
    pt->samples[index * reps + s->replication] = value;
}

static int finish_point(task_round *r, size_t p, char *err, size_t err_size);

static int merge_task(void *context, size_t task, const unsigned char *data, size_t size,
                      char *err, size_t err_size)
{
    task_round *r = context;
    size_t p;
    unsigned rep;
    locate(r, task, &p, &rep);
    experiment_point *pt = &r->x->points[p];
    sim_wire_reader in = sim_wire_reader_of(data, size);
    char label[1024], message[2048];
    uint64_t kind = sim_wire_get_u64(&in);
    if (!in.bad && kind == TASK_FAILED) {
        sim_wire_get_string(&in, message, sizeof message);
        experiment_point_label(r->x, p, label, sizeof label);
        if (r->x->nkeys)
            snprintf(err, err_size, "%s: replication %u at %s: %s", r->x->options.file, rep + 1,
                     label, message);
        else if (!strncmp(message, r->x->options.file, strlen(r->x->options.file)))
            snprintf(err, err_size, "%s", message); /* "file:line: ..." already */
        else
            snprintf(err, err_size, "%s: %s", r->x->options.file, message);
        r->failure = EXPERIMENT_BAD_INPUT;
        return -1;
    }
    pt->results.events += sim_wire_get_u64(&in);
    sample_sink sink = { pt, rep };
    if (in.bad || kind != TASK_OK
        || sim_metrics_unpack_add(&in, &pt->results.metrics, keep_sample, &sink) != 0
        || sim_timeseries_unpack_add(&in, &pt->results.timeseries) != 0 || in.at != size) {
        snprintf(err, err_size, "the result of task %zu arrived damaged (%zu bytes)", task, size);
        r->failure = EXPERIMENT_FAILED;
        return -1;
    }
    if (rep + 1 == pt->replications && finish_point(r, p, err, err_size) != 0)
        return -1;
    if (rep + 1 == pt->replications && r->x->options.progress)
        r->x->options.progress(r->x->options.progress_context, p + 1, r->x->npoints);
    return 0;
}

/* Runs every replication of points first .. first + n - 1. */
static experiment_status run_points(experiment *x, size_t first, size_t n, char *err,
                                    size_t err_size)
{
    task_round r = { x, first, n, allocate(n + 1, sizeof *r.offsets), EXPERIMENT_OK };
    for (size_t i = 0; i < n; i++)
        r.offsets[i + 1] = r.offsets[i] + x->points[first + i].replications;
    sim_tasks_config config = x->options.tasks;
    config.describe = describe_task;
    config.worker_exit = release_in_worker;
    sim_tasks_status status = sim_tasks_run(&config, r.offsets[n], run_task, merge_task, &r,
                                            err, err_size);
    free(r.offsets);
    drop_held(x); /* the run is done: free the models */
    if (status == SIM_TASKS_MERGE_FAILED)
        return r.failure;
    return status == SIM_TASKS_OK ? EXPERIMENT_OK : EXPERIMENT_FAILED;
}

/* ---- search ------------------------------------------------------------------------- */

/* Appends text to a list in buf unless it is there already. */
static void list_once(char *buf, size_t size, const char *text)
{
    size_t n = strlen(text);
    for (const char *p = buf; (p = strstr(p, text)); p += n)
        if ((p == buf || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
            return;
    size_t used = strlen(buf);
    snprintf(buf + used, size - used, "%s%s", used ? ", " : "", text);
}

/* Finds each condition's metric in the first probe's results: exactly one must match. */
static experiment_status resolve_target(experiment *x, const sim_metrics *m, char *err,
                                        size_t err_size)
{
    const search_spec *s = &x->spec.search;
    for (size_t k = 0; k < s->nconds; k++) {
        const char *metric = s->conds[k].metric;
        const sim_metric *match = NULL;
        size_t matches = 0;
        char names[1536] = "", subjects[1024] = "";
        for (size_t i = 0; i < m->count; i++) {
            const sim_metric *mi = &m->items[i];
            bool subject_ok = (!s->subject || !strcmp(mi->subject, s->subject))
                              && (!s->scope || !strcmp(mi->scope, s->scope));
            if (subject_ok)
                list_once(names, sizeof names, mi->name);
            if (subject_ok && !strcmp(mi->name, metric)) {
                char who[512];
                snprintf(who, sizeof who, "%s %s", mi->scope, mi->subject);
                list_once(subjects, sizeof subjects, who);
                match = matches++ ? match : mi;
            }
        }
        if (matches == 1) {
            snprintf(x->target_scope[k], sizeof x->target_scope[k], "%s", match->scope);
            snprintf(x->target_subject[k], sizeof x->target_subject[k], "%s", match->subject);
            continue;
        }
        if (matches > 1)
            snprintf(err, err_size, "%ssearch.target: %s is measured for %s: give subject (and "
                     "scope) in fs.search", s->where, metric, subjects);
        else if (!*names && s->subject) /* what the search names measured nothing */
            snprintf(err, err_size, "%ssearch.subject: no metrics for %s%s%s", s->where,
                     s->subject, s->scope ? " in scope " : "", s->scope ? s->scope : "");
        else if (!*names)
            snprintf(err, err_size, "%ssearch.scope: no metrics in scope %s", s->where,
                     s->scope ? s->scope : "(none)");
        else
            snprintf(err, err_size, "%ssearch.target: unknown metric '%s'%s%s (metrics: %s)",
                     s->where, metric, s->subject ? " for " : "", s->subject ? s->subject : "",
                     names);
        return EXPERIMENT_BAD_INPUT;
    }
    return EXPERIMENT_OK;
}

/* Each condition's measured mean at point pt, and whether it meets them all. */
static void judge_point(const experiment *x, experiment_point *pt)
{
    const search_spec *s = &x->spec.search;
    pt->meets = true;
    for (size_t k = 0; k < s->nconds; k++) {
        const sim_metric *m = sim_metrics_find(&pt->results.metrics, x->target_scope[k],
                                               x->target_subject[k], s->conds[k].metric);
        pt->measured[k] = m ? sim_stat_mean(&m->replications) : NAN;
        pt->meets &= experiment_load_search_meets(s->conds[k].op, pt->measured[k],
                                                  s->conds[k].threshold);
    }
}

/* Finds a grid search's objective in the first point's results: the metric of that name
 * for the subject given ("cost_usd of gpus"), else its only one, else the run's. */
static experiment_status resolve_objective(experiment *x, const sim_metrics *m, char *err,
                                           size_t err_size)
{
    const search_spec *s = &x->spec.search;
    const sim_metric *match = NULL, *run = NULL;
    size_t matches = 0;
    char names[1536] = "", subjects[1024] = "";
    for (size_t i = 0; i < m->count; i++) {
        const sim_metric *mi = &m->items[i];
        if (s->objective_subject && strcmp(mi->subject, s->objective_subject))
            continue;
        list_once(names, sizeof names, mi->name);
        if (strcmp(mi->name, s->objective_metric))
            continue;
        char who[512];
        snprintf(who, sizeof who, "%s%s%s", mi->subject, *mi->subject ? " " : "", mi->scope);
        list_once(subjects, sizeof subjects, who);
        match = matches++ ? match : mi;
        if (!strcmp(mi->scope, "run"))
            run = mi;
    }
    const char *key = s->maximise ? "search.maximise" : "search.minimise";
    if (matches > 1 && run)
        match = run, matches = 1;
    if (matches == 1) {
        snprintf(x->objective_scope, sizeof x->objective_scope, "%s", match->scope);
        snprintf(x->objective_subject, sizeof x->objective_subject, "%s", match->subject);
        return EXPERIMENT_OK;
    }
    if (matches > 1)
        snprintf(err, err_size, "%s%s: %s is measured for %s: name one, as in \"%s of %s\"",
                 s->where, key, s->objective_metric, subjects, s->objective_metric,
                 m->items[0].subject);
    else if (!*names)
        snprintf(err, err_size, "%s%s: no metrics for %s", s->where, key, s->objective_subject);
    else
        snprintf(err, err_size, "%s%s: unknown metric '%s'%s%s (metrics: %s)", s->where, key,
                 s->objective_metric, s->objective_subject ? " for " : "",
                 s->objective_subject ? s->objective_subject : "", names);
    return EXPERIMENT_BAD_INPUT;
}

/* A grid search: every point runs (one round, spread over the workers), then of those
 * meeting the target the least (or most) objective wins, the first in grid order on a
 * tie; a point without the objective's value cannot win. */
static experiment_status run_grid(experiment *x, char *err, size_t err_size)
{
    const search_spec *s = &x->spec.search;
    experiment_status status = run_points(x, 0, x->npoints, err, err_size);
    if (status != EXPERIMENT_OK)
        return status;
    for (size_t p = 0; p < x->npoints; p++) { /* judged as each point completed */
        const experiment_point *pt = &x->points[p];
        if (!pt->meets || isnan(pt->objective))
            continue;
        double best = x->found ? x->points[x->answer_point].objective : NAN;
        if (!x->found || (s->maximise ? pt->objective > best : pt->objective < best)) {
            x->found = true;
            x->answer_point = p;
        }
    }
    return EXPERIMENT_OK;
}

/* Runs probe p and says whether it meets the target. */
static experiment_status probe(experiment *x, size_t p, char *err, size_t err_size)
{
    return run_points(x, p, 1, err, err_size); /* judged as it completed */
}

/* What a search reads of a point once point_done has had it: the target's and the
 * objective's metrics (nothing of a sweep's point). */
static void shrink_point(experiment *x, experiment_point *pt)
{
    sim_metrics kept;
    sim_metrics_init(&kept);
    const search_spec *s = &x->spec.search;
    for (size_t k = 0; x->spec.has_search && k < s->nconds; k++) {
        const sim_metric *m = sim_metrics_find(&pt->results.metrics, x->target_scope[k],
                                               x->target_subject[k], s->conds[k].metric);
        if (m && !sim_metrics_find(&kept, m->scope, m->subject, m->name)) /* named once */
            sim_metrics_add_metric(&kept, m);
    }
    if (x->spec.has_search && s->objective) {
        const sim_metric *o = sim_metrics_find(&pt->results.metrics, x->objective_scope,
                                               x->objective_subject, s->objective_metric);
        if (o && !sim_metrics_find(&kept, o->scope, o->subject, o->name))
            sim_metrics_add_metric(&kept, o);
    }
    uint64_t events = pt->results.events;
    run_results_release(&pt->results);
    pt->results.metrics = kept;
    pt->results.events = events;
    free(pt->samples);
    pt->samples = NULL;
    pt->samples_metrics = 0;
}

/* Gives point_done every point from next_done on that has completed (all of them with
 * all), in point order, each shrunk after. */
static int hand_over(experiment *x, bool all, char *err, size_t err_size)
{
    for (; x->next_done < x->npoints && (all || x->points[x->next_done].completed);
         x->next_done++) {
        size_t p = x->next_done;
        if (x->options.point_done
            && x->options.point_done(x->options.point_context, x, p, err, err_size) != 0)
            return -1;
        if (!x->options.keep_results && p > 0)
            shrink_point(x, &x->points[p]);
    }
    return 0;
}

/* Point p's replications are all merged: a search judges it (the first point run names
 * the target's metrics, and a grid's objective), and it is handed over in turn. */
static int finish_point(task_round *r, size_t p, char *err, size_t err_size)
{
    experiment *x = r->x;
    experiment_point *pt = &x->points[p];
    const search_spec *s = &x->spec.search;
    if (x->spec.has_search) {
        experiment_status status = EXPERIMENT_OK;
        if (!x->target_resolved)
            status = resolve_target(x, &pt->results.metrics, err, err_size);
        if (status == EXPERIMENT_OK && !x->target_resolved && s->ngrid)
            status = resolve_objective(x, &pt->results.metrics, err, err_size);
        if (status != EXPERIMENT_OK) {
            r->failure = status;
            return -1;
        }
        x->target_resolved = true;
        judge_point(x, pt);
        if (s->ngrid) {
            const sim_metric *o = sim_metrics_find(&pt->results.metrics, x->objective_scope,
                                                   x->objective_subject, s->objective_metric);
            pt->objective = o ? sim_stat_mean(&o->replications) : NAN;
        }
    }
    pt->completed = true;
    if (hand_over(x, false, err, err_size) != 0) {
        r->failure = EXPERIMENT_FAILED;
        return -1;
    }
    return 0;
}

/* The smallest value meeting the target (meeting is taken to grow with the value), or
 * with find = "largest" the largest (meeting taken to shrink with it), on the grid low,
 * low + step, ..., high: bisection over the grid's indices. */
static experiment_status run_search(experiment *x, char *err, size_t err_size)
{
    const search_spec *s = &x->spec.search;
    /* points 0 and 1 are low and high, loaded by the plan; the end that answers at once
     * is low for the smallest, high for the largest */
    size_t first = s->largest && x->npoints > 1 ? 1 : 0, second = 1 - first;
    experiment_status status = probe(x, first, err, err_size);
    if (status != EXPERIMENT_OK || x->points[first].meets) {
        x->found = status == EXPERIMENT_OK;
        x->answer = first ? s->high : s->low;
        x->answer_point = first;
        return status;
    }
    if (x->npoints < 2)
        return EXPERIMENT_OK; /* low == high, and it does not meet the target */
    if ((status = probe(x, second, err, err_size)) != EXPERIMENT_OK || !x->points[second].meets)
        return status;
    /* indices into the grid: `miss` fails, `hit` meets */
    long long miss = s->largest ? (s->high - s->low) / s->step : 0;
    long long hit = s->largest ? 0 : (s->high - s->low) / s->step;
    while (llabs(hit - miss) > 1) {
        long long mid = miss + (hit - miss) / 2;
        if ((status = add_probe(x, s->low + mid * s->step, err, err_size)) != EXPERIMENT_OK
            || (status = probe(x, x->npoints - 1, err, err_size)) != EXPERIMENT_OK)
            return status;
        if (x->points[x->npoints - 1].meets)
            hit = mid;
        else
            miss = mid;
    }
    x->found = true;
    x->answer = s->low + hit * s->step;
    char text[32];
    snprintf(text, sizeof text, "%lld", x->answer);
    for (size_t p = 0; p < x->npoints; p++) /* the probe of the answer */
        if (!strcmp(x->points[p].values[0], text))
            x->answer_point = p;
    return EXPERIMENT_OK;
}

experiment_status experiment_run(experiment *x, char *err, size_t err_size)
{
    experiment_status status;
    if (x->spec.has_search && x->spec.search.ngrid)
        status = run_grid(x, err, err_size);
    else if (x->spec.has_search)
        status = run_search(x, err, err_size);
    else
        status = run_points(x, 0, x->npoints, err, err_size);
    if (status == EXPERIMENT_OK && hand_over(x, true, err, err_size) != 0) /* unrun probes */
        status = EXPERIMENT_FAILED;
    return status;
}
