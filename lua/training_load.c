/* Training workloads of a scenario file (see training_load.h). */
#include "lua/training_load.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/engine_load.h"
#include "models/scenario.h"

const char *const TRAINING_KEYS[] = {
    "model", "tokens", "steps", "step", "gpus", "parallelism", "precision", "seq_len",
    "global_batch", "lora", "pool", "at", "priority", "checkpoint", "restart", "engine", "start",
    "deadline", NULL,
};
const char *const JOB_STREAM_KEYS[] = {
    "pool", "arrivals", "gpus", "duration", "count", "priority", "checkpoint", "restart",
    "trace", "streams", NULL,
};
static const char *const CHECKPOINT_KEYS[] = { "every", "write", NULL };
static const char *const PARALLELISM_KEYS[] = {
    "tp", "pp", "cp", "ep", "etp", "vpp", "dp", "micro_batch", "zero", "hsdp", "recompute",
    "schedule", "sp", "dp_overlap", "dispatcher", "ep_overlap", "tp_overlap",
    NULL,
};

/* in training_schedule's order */
static const char *const SCHEDULES[] = { "planned", "1f1b", "interleaved", "zero_bubble",
                                         "dualpipe", NULL };
static const char *const PRECISIONS[] = { "fp32", "tf32", "fp16", "bf16", "fp8", "int8",
                                          "int4", "fp4", NULL };

#define MAX_PRIORITY 1000000
#define MAX_DURATION_S 3.2e9

/* "workloads.tune" -> "tune" */
static char *name_from_path(const char *path)
{
    const char *dot = strrchr(path, '.');
    return strdup(dot ? dot + 1 : path);
}

static int key_path_fail(load_context *c, const fields_object *o, const char *key,
                         const char *message)
{
    char path[FIELD_PATH_MAX];
    snprintf(path, sizeof path, "%s.%s", o->path, key);
    return fields_fail(c, o->where, path, "%s", message);
}

/* checkpoint = { every = "1h", write = "2m" } and restart = "10m" */
static int convert_checkpoint(load_context *c, const fields_object *w, checkpoint_spec *ck,
                              double *restart_s)
{
    *ck = (checkpoint_spec){ 0, 0 };
    if (fields_read_duration(c, w, "restart", false, 0, 0, MAX_DURATION_S, true, restart_s) != 0)
        return -1;
    int top = lua_gettop(c->L);
    fields_object o;
    int found = fields_object_open_field(c, w, "checkpoint", NULL,
                                         "a table such as { every = \"1h\", write = \"1m\" }", &o);
    if (found <= 0)
        return found;
    int status = fields_object_check_keys(c, &o, CHECKPOINT_KEYS)
                 || fields_read_duration(c, &o, "every", true, 0, 0, MAX_DURATION_S, false,
                                         &ck->every_s)
                 || fields_read_duration(c, &o, "write", false, 0, 0, MAX_DURATION_S, true,
                                         &ck->write_s);
    lua_settop(c->L, top);
    return status ? -1 : 0;
}

static int read_priority(load_context *c, const fields_object *w, int *out)
{
    int64_t priority;
    if (fields_read_integer(c, w, "priority", false, 0, -MAX_PRIORITY, MAX_PRIORITY,
                            &priority) != 0)
        return -1;
    *out = (int)priority;
    return 0;
}

/* recompute = "none" | "selective" | "full" | layers a stage recomputed in full: into c's
 * recompute_layers (more than a stage has: all of it) and selective */
/* A switch of the plan (sp = true | false: tensor parallelism with or without sequence
 * parallelism; dp_overlap: the data-parallel collectives under the passes or in series)
 * into *out: 1 or 0; absent, left as it is (the engine's way) */
static int read_switch(load_context *c, const fields_object *o, const char *key, int *out)
{
    int type = fields_object_get(c, o, key);
    lua_pop(c->L, 1);
    if (type == LUA_TNIL)
        return 0;
    bool on = false;
    int status = fields_read_flag(c, o, key, false, &on);
    *out = on;
    return status;
}

static int read_recompute(load_context *c, const fields_object *o, training_constraints *out)
{
    static const char *const expected = "expected \"none\", \"selective\", \"full\" or a "
                                        "whole number of layers a stage recomputed in full";
    char got[96];
    int type = fields_object_get(c, o, "recompute");
    int status = 0;
    if (type == LUA_TSTRING) {
        const char *word = lua_tostring(c->L, -1);
        if (!strcmp(word, "none") || !strcmp(word, "selective")) {
            out->recompute_layers = 0;
            out->selective = !strcmp(word, "selective");
        } else if (!strcmp(word, "full")) {
            out->recompute_layers = INT_MAX;
            out->selective = 0;
        } else {
            status = -1;
        }
    } else if (type == LUA_TNUMBER) {
        double x = lua_tonumber(c->L, -1);
        if (x >= 0 && x <= 1000000 && x == floor(x))
            out->recompute_layers = (int)x;
        else
            status = -1;
    } else if (type != LUA_TNIL) {
        status = -1;
    }
    if (status) {
        char message[256];
        snprintf(message, sizeof message, "%s, got %s", expected,
                 fields_describe(c->L, -1, got, sizeof got));
        lua_pop(c->L, 1);
        return key_path_fail(c, o, "recompute", message);
    }
    lua_pop(c->L, 1);
    return 0;
}

/* A stated combination no plan can take, refused at `key` with what was given. */
static __attribute__((format(printf, 4, 5))) int parallelism_fail(load_context *c,
                                                                   const fields_object *o,
                                                                   const char *key,
                                                                   const char *format, ...)
{
    char message[256];
    va_list ap;
    va_start(ap, format);
    vsnprintf(message, sizeof message, format, ap);
    va_end(ap);
    return key_path_fail(c, o, key, message);
}

/* The stated schedule against the stated pp and vpp, and HSDP against zero (0 where not
 * given; zero -1): a combination no plan can take is refused at the key that breaks it. */
static int check_parallelism(load_context *c, const fields_object *o, training_schedule sched,
                             int64_t pp, int64_t vpp, int64_t zero, int64_t hsdp)
{
    const char *name = SCHEDULES[sched];
    bool one_chunk = sched == TRAINING_SCHEDULE_1F1B || sched == TRAINING_SCHEDULE_ZERO_BUBBLE
                     || sched == TRAINING_SCHEDULE_DUALPIPE;
    if (sched == TRAINING_SCHEDULE_DUALPIPE && pp % 2)
        return parallelism_fail(c, o, "pp", "DualPipe pairs the pipeline's stages: give an "
                                "even pp, got %lld", (long long)pp);
    if (one_chunk && vpp > 1)
        return parallelism_fail(c, o, "vpp", "the \"%s\" schedule runs one model chunk a "
                                "stage: leave vpp out (or 1), got %lld", name, (long long)vpp);
    if (sched == TRAINING_SCHEDULE_INTERLEAVED && vpp == 1)
        return parallelism_fail(c, o, "vpp", "the \"interleaved\" schedule runs 2 or more "
                                "model chunks a stage, got 1");
    if (pp == 1 && (vpp > 1 || sched == TRAINING_SCHEDULE_INTERLEAVED
                    || sched == TRAINING_SCHEDULE_ZERO_BUBBLE))
        return parallelism_fail(c, o, "pp", "the \"%s\" schedule needs a pipeline of 2 or "
                                "more stages, got 1", vpp > 1 ? "interleaved" : name);
    if (hsdp && zero >= 0 && zero != 3)
        return parallelism_fail(c, o, "hsdp", "HSDP shards ZeRO-3's states within groups of "
                                "ranks: zero must be 3 with it, got %lld", (long long)zero);
    return 0;
}

/* parallelism = { tp = 8, pp = 4, cp, ep, etp, vpp, dp, micro_batch, zero, hsdp,
 * recompute, schedule = "dualpipe", sp, dp_overlap, tp_overlap, dispatcher = "deepep",
 * ep_overlap }:
 * each key given is imposed on the planner, each left
 * out is the planner's; the schedule the planner's ("planned") unless named */
static int convert_parallelism(load_context *c, const fields_object *w, training_constraints *out,
                               training_schedule *schedule_out)
{
    int64_t tp, pp, cp, ep, etp, vpp, dp, mb, zero, hsdp;
    int schedule = 0, dispatcher = -1;
    int top = lua_gettop(c->L);
    fields_object o;
    *schedule_out = TRAINING_SCHEDULE_PLANNED;
    int found = fields_object_open_field(c, w, "parallelism", NULL,
                                         "a table such as { tp = 8, pp = 2 }", &o);
    if (found <= 0)
        return found;
    int status = fields_object_check_keys(c, &o, PARALLELISM_KEYS)
                 || fields_read_integer(c, &o, "tp", false, 0, 1, 1024, &tp)
                 || fields_read_integer(c, &o, "pp", false, 0, 1, 1024, &pp)
                 || fields_read_integer(c, &o, "cp", false, 0, 1, 1024, &cp)
                 || fields_read_integer(c, &o, "ep", false, 0, 1, 1024, &ep)
                 || fields_read_integer(c, &o, "etp", false, 0, 1, 1024, &etp)
                 || fields_read_integer(c, &o, "vpp", false, 0, 1, 64, &vpp)
                 || fields_read_integer(c, &o, "dp", false, 0, 1, SCENARIO_MAX_SERVERS, &dp)
                 || fields_read_integer(c, &o, "micro_batch", false, 0, 1, 1000000, &mb)
                 || fields_read_integer(c, &o, "zero", false, -1, 0, 3, &zero)
                 || fields_read_integer(c, &o, "hsdp", false, 0, 1, SCENARIO_MAX_SERVERS, &hsdp)
                 || read_recompute(c, &o, out)
                 || read_switch(c, &o, "sp", &out->sequence_parallel)
                 || read_switch(c, &o, "dp_overlap", &out->dp_overlap)
                 || read_switch(c, &o, "ep_overlap", &out->ep_overlap)
                 || read_switch(c, &o, "tp_overlap", &out->tp_overlap)
                 || fields_read_choice(c, &o, "dispatcher", training_dispatcher_names, -1,
                                       &dispatcher)
                 || fields_read_choice(c, &o, "schedule", SCHEDULES, 0, &schedule)
                 || check_parallelism(c, &o, (training_schedule)schedule, pp, vpp, zero, hsdp);
    lua_settop(c->L, top);
    if (status)
        return -1;
    out->tp = (unsigned)tp;
    out->pp = (unsigned)pp;
    if (dispatcher >= 0)
        out->dispatcher = TRAINING_DISPATCH_ALLTOALL + dispatcher;
    out->cp = (unsigned)cp;
    out->ep = (unsigned)ep;
    out->etp = (unsigned)etp;
    out->virtual_stages = (unsigned)vpp;
    out->dp = (unsigned)dp;
    out->micro_batch = (unsigned)mb;
    out->zero_stage = hsdp ? 3 : (int)zero; /* HSDP is ZeRO-3 within its groups */
    out->shard_ranks = (unsigned)hsdp;
    *schedule_out = (training_schedule)schedule;
    training_schedule_impose(out, *schedule_out);
    return 0;
}

static int find_model(load_context *c, const fields_object *w, const catalog *cat,
                      const char *name, const model_spec **out)
{
    char path[FIELD_PATH_MAX], names[1024];
    snprintf(path, sizeof path, "%s.model", w->path);
    *out = catalog_model(cat, name);
    if (*out)
        return 0;
    const char *hint = catalog_closest_model(cat, name);
    if (hint)
        return fields_fail(c, w->where, path, "unknown model \"%s\" (did you mean \"%s\"?)",
                           name, hint);
    return fields_fail(c, w->where, path, "unknown model \"%s\" (known: %s)", name,
                       catalog_model_names(cat, names, sizeof names));
}

/* The work of a job with a model: its step time from the performance model. */
static int training_from_model(load_context *c, const fields_object *w, const catalog *cat,
                               const char *model, const char *pool_gpu,
                               const perf_profile *profile, training_spec *out)
{
    int64_t seq_len, global_batch;
    int prec;
    double tokens, steps;
    const model_spec *m;
    training_constraints imposed = TRAINING_FREE;
    training_schedule schedule;
    size_t engine;
    bool defaulted;
    if (find_model(c, w, cat, model, &m) != 0
        || engine_load(c, w, cat, true, &engine, &defaulted) != 0
        || convert_parallelism(c, w, &imposed, &schedule) != 0
        || fields_read_flag(c, w, "lora", false, &imposed.lora) != 0
        || fields_read_choice(c, w, "precision", PRECISIONS, PREC_BF16, &prec) != 0
        || fields_read_integer(c, w, "seq_len", false, 4096, 1, 10000000, &seq_len) != 0
        || fields_read_integer(c, w, "global_batch", false, 512, 1, 1000000000, &global_batch) != 0
        || fields_read_number(c, w, "tokens", false, 0, 0, 1e18, false, &tokens) != 0
        || fields_read_number(c, w, "steps", false, 0, 0, 1e15, false, &steps) != 0)
        return -1;
    if ((tokens > 0) == (steps > 0))
        return fields_fail(c, w->where, w->path, "give the work as tokens or as steps (one "
                           "of them)");
    if (fields_object_get(c, w, "step") != LUA_TNIL) {
        lua_pop(c->L, 1);
        return key_path_fail(c, w, "step", "the step time comes from the model; leave it "
                             "out, or leave out the model");
    }
    lua_pop(c->L, 1);
    engine_training_state(&cat->engines[engine], &imposed);
    out->has_engine = true;
    out->engine = engine;
    const device_spec *d = pool_gpu ? catalog_device(cat, pool_gpu) : NULL;
    if (!d)
        return key_path_fail(c, w, "pool", "the pool names no GPU to train the model on");
    char err[600];
    if (perf_training_precision_check(d, (precision)prec, err, sizeof err) != 0)
        return key_path_fail(c, w, "precision", err);
    /* the pool's profile (or the device's default) with the framework's kernel families */
    perf_profile base = profile ? *profile : perf_default_profile(d);
    perf_profile trained = engine_apply_profile(&cat->engines[engine], &base, d);
    int status = training_job_from_model(out, m, d, &trained, (precision)prec, out->gpus,
                                         imposed, schedule, (unsigned)seq_len,
                                         (unsigned)global_batch, tokens, steps, err, sizeof err);
    /* a stated plan no setup can take is the parallelism's; memory, the GPUs' */
    int stated = fields_object_get(c, w, "parallelism");
    lua_pop(c->L, 1);
    if (status != 0)
        return key_path_fail(c, w, status == -2 && stated != LUA_TNIL ? "parallelism" : "gpus",
                             err);
    return 0;
}

/* start = "at_once" | "low_carbon" with deadline = a duration from the run's start */
static int convert_start(load_context *c, const fields_object *w, training_spec *out)
{
    static const char *const starts[] = { "at_once", "low_carbon", NULL };
    int start = 0;
    out->arrival_s = out->at_s;
    if (fields_read_choice(c, w, "start", starts, 0, &start) != 0
        || fields_read_duration(c, w, "deadline", start == 1, 0, 0, MAX_DURATION_S, false,
                                &out->deadline_s) != 0)
        return -1;
    if (start == 0 && out->deadline_s > 0)
        return key_path_fail(c, w, "deadline", "is read with start = \"low_carbon\" (the latest "
                             "end of a job that may wait for low-carbon hours)");
    out->low_carbon = start == 1;
    return 0;
}

int training_load_convert(load_context *c, const fields_object *w, const catalog *cat, size_t pool,
                          const char *pool_gpu, const perf_profile *profile, training_spec *out)
{
    *out = (training_spec){ .pool = pool, .mfu = NAN };
    if (!(out->name = name_from_path(w->path)))
        return fields_fail(c, w->where, w->path, "out of memory");
    char *model = NULL;
    int64_t gpus;
    int status = fields_object_check_keys(c, w, TRAINING_KEYS)
                 || fields_read_string(c, w, "model", false, &model)
                 || fields_read_integer(c, w, "gpus", true, 0, 1, SCENARIO_MAX_SERVERS, &gpus)
                 || fields_read_duration(c, w, "at", false, 0, 0, MAX_DURATION_S, true, &out->at_s)
                 || read_priority(c, w, &out->priority)
                 || convert_checkpoint(c, w, &out->checkpoint, &out->restart_s)
                 || convert_start(c, w, out);
    if (status == 0)
        out->gpus = (unsigned)gpus;
    if (status == 0 && model) {
        status = training_from_model(c, w, cat, model, pool_gpu, profile, out);
    } else if (status == 0) { /* no model: steps of a given length */
        static const char *const model_only[] = { "tokens", "parallelism", "precision",
                                                  "seq_len", "global_batch", "lora", "engine",
                                                  NULL };
        for (int i = 0; model_only[i] && status == 0; i++) {
            if (fields_object_get(c, w, model_only[i]) != LUA_TNIL)
                status = key_path_fail(c, w, model_only[i], "needs a model (model = "
                                       "\"llama-3-8b\"); without one give steps and step");
            lua_pop(c->L, 1);
        }
        status = status
                 || fields_read_number(c, w, "steps", true, 0, 0, 1e15, false, &out->steps)
                 || fields_read_duration(c, w, "step", true, 0, 0, MAX_DURATION_S, false,
                                         &out->step_s);
    }
    free(model);
    return status ? -1 : 0;
}

/* arrivals = fs.poisson { rate }, fs.constant_rate { rate }, or a distribution of gaps */
static int convert_stream_arrivals(load_context *c, const fields_object *w, sim_dist *out)
{
    static const char *const rate_keys[] = { "rate", NULL };
    int top = lua_gettop(c->L);
    if (fields_object_get(c, w, "arrivals") == LUA_TTABLE) {
        char path[FIELD_PATH_MAX];
        snprintf(path, sizeof path, "%s.arrivals", w->path);
        fields_object a;
        int status = fields_object_open(c, -1, path, w->where, NULL, "an arrival process such as "
                                        "fs.poisson { rate = \"2/h\" }", &a);
        bool poisson = status == 0 && !strcmp(a.kind, "poisson");
        bool even = status == 0 && !strcmp(a.kind, "constant_rate");
        if (status == 0 && (poisson || even)) {
            double rate;
            status = fields_object_check_keys(c, &a, rate_keys)
                     || fields_read_rate(c, &a, "rate", SCENARIO_MAX_RATE_PER_S, &rate);
            if (status == 0)
                *out = poisson ? sim_dist_exponential(1 / rate) : sim_dist_constant(1 / rate);
            lua_settop(c->L, top);
            return status ? -1 : 0;
        }
        lua_settop(c->L, top);
        if (status != 0)
            return -1;
    }
    lua_settop(c->L, top);
    return fields_read_duration_dist(c, w, "arrivals", out);
}

static int convert_stream_trace(load_context *c, const fields_object *w, job_stream_spec *out)
{
    static const char *const drawn[] = { "arrivals", "gpus", "duration", "count", NULL };
    for (int i = 0; drawn[i]; i++) {
        int type = fields_object_get(c, w, drawn[i]);
        lua_pop(c->L, 1);
        if (type != LUA_TNIL)
            return key_path_fail(c, w, drawn[i], "comes from the trace; leave it out, or "
                                 "leave out the trace");
    }
    char *file = NULL, *resolved = NULL;
    int status = fields_read_string(c, w, "trace", true, &file)
                 || fields_resolve_path(c, w, "trace", file, &resolved);
    char err[600];
    if (status == 0 && job_trace_read(resolved, &out->trace, err, sizeof err) != 0)
        status = key_path_fail(c, w, "trace", err);
    out->has_trace = status == 0;
    free(file);
    free(resolved);
    return status ? -1 : 0;
}

int training_load_convert_job_stream(load_context *c, const fields_object *w, size_t pool,
                                     job_stream_spec *out)
{
    *out = (job_stream_spec){ .pool = pool };
    out->interarrival_s = out->gpus = out->duration_s = sim_dist_constant(0);
    if (!(out->name = name_from_path(w->path)))
        return fields_fail(c, w->where, w->path, "out of memory");
    if (fields_object_check_keys(c, w, JOB_STREAM_KEYS) != 0
        || fields_read_string(c, w, "streams", false, &out->streams) != 0
        || read_priority(c, w, &out->priority) != 0
        || convert_checkpoint(c, w, &out->checkpoint, &out->restart_s) != 0)
        return -1;
    int type = fields_object_get(c, w, "trace");
    lua_pop(c->L, 1);
    if (type != LUA_TNIL)
        return convert_stream_trace(c, w, out);
    int64_t count;
    if (convert_stream_arrivals(c, w, &out->interarrival_s) != 0
        || fields_read_count_dist(c, w, "gpus", &out->gpus) != 0
        || fields_read_duration_dist(c, w, "duration", &out->duration_s) != 0
        || fields_read_integer(c, w, "count", false, 0, 1, 1000000000, &count) != 0)
        return -1;
    out->count = (uint64_t)count;
    if (sim_dist_quantile(&out->gpus, 0.999) > SCENARIO_MAX_SERVERS)
        return key_path_fail(c, w, "gpus", "draws more GPUs than any pool can hold");
    return 0;
}

int training_load_convert_scheduler(load_context *c, const fields_object *pool, scheduler_spec *out)
{
    static const char *const policies[] = { "fifo", "priority", "backfill", NULL };
    int policy;
    if (fields_read_choice(c, pool, "scheduler", policies, SCHED_FIFO, &policy) != 0)
        return -1;
    out->policy = (scheduler_policy)policy;
    return 0;
}
