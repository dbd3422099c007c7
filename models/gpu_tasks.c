/* Event-driven replay of a GPU cluster trace (see gpu_tasks.h). */
#include "models/gpu_tasks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/event_order.h"
#include "sim/fatal.h"

#define NONE (-1)

typedef struct task_state {
    gpu_tasks *owner;
    gpu_demand demand;        /* as placed (rounded up under WHOLE_GPUS) */
    uint32_t requested_milli; /* GPU thousandths asked for, before any rounding */
    gpu_slot slot;
    double arrival_s, duration_s, placed_s;
    int32_t prev, next;       /* the waiting list */
    bool replayed;
} task_state;

struct gpu_tasks {
    sim_engine *engine;
    const cluster_trace *trace;
    gpu_tasks_options options;
    gpu_fleet *fleet;
    size_t *kept;             /* trace index of each fleet node */
    size_t nkept;
    task_state *tasks;        /* one per trace task */
    size_t *order;            /* replayed tasks by arrival */
    size_t norder, next_arrival;
    int32_t head, tail;       /* waiting tasks, in arrival order */
    size_t waiting, waiting_gpu;
    uint64_t requested_milli; /* asked for by the running tasks */
    double trace_end_s;
    gpu_tasks_stats stats;
    /* integrals and counts at the start of the current bucket */
    double bucket_start_s, bucket_allocation, bucket_fragmentation, bucket_waiting;
    uint64_t bucket_arrived, bucket_placed;
};

gpu_tasks_options gpu_tasks_options_default(void)
{
    return (gpu_tasks_options){ PLACE_FIRST_FIT, 1, 1, true, true };
}

int gpu_tasks_spec_load(gpu_tasks_spec *spec, char *err, size_t err_size)
{
    cluster_trace_release(&spec->trace);
    return cluster_trace_read(spec->nodes_path, spec->tasks_path, &spec->trace, err, err_size);
}

void gpu_tasks_spec_release(gpu_tasks_spec *spec)
{
    if (!spec)
        return;
    free(spec->nodes_path);
    free(spec->tasks_path);
    cluster_trace_release(&spec->trace);
    memset(spec, 0, sizeof *spec);
}

/* ---- set-up ---- */

/* Whether task j arrives before task i (ties keep the file order). */
static bool arrives_before(const task_state *tasks, size_t j, size_t i)
{
    return tasks[j].arrival_s < tasks[i].arrival_s
           || (tasks[j].arrival_s == tasks[i].arrival_s && j < i);
}

/* A bottom-up merge sort of task indices by arrival (C11's qsort takes no context). */
static void sort_order(size_t *a, size_t n, const task_state *tasks)
{
    size_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp)
        sim_out_of_memory("out of memory sorting tasks");
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = arrives_before(tasks, a[j], a[i]) ? a[j++] : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, n * sizeof *a);
    }
    free(tmp);
}

static bool replayed(const gpu_tasks_options *o, const cluster_task *c)
{
    return (o->cpu_tasks || c->num_gpu > 0) && (o->unscheduled || c->scheduled);
}

static gpu_demand demand_of(const gpu_tasks_options *o, const cluster_task *c)
{
    gpu_demand d = { c->cpu_milli, c->memory_mib, c->num_gpu, c->gpu_milli, 0 };
    if (o->placement == PLACE_WHOLE_GPUS && d.num_gpu > 0)
        d.gpu_milli = CLUSTER_GPU_MILLI; /* a dedicated GPU per share */
    return d;
}

static int check_options(const gpu_tasks_options *o, char *err, size_t n)
{
    if (!(o->speedup > 0) || !isfinite(o->speedup)) {
        snprintf(err, n, "speedup: expected a positive number, got %g", o->speedup);
        return -1;
    }
    if (!(o->nodes_fraction > 0 && o->nodes_fraction <= 1)) {
        snprintf(err, n, "nodes_fraction: expected a number in (0, 1], got %g",
                 o->nodes_fraction);
        return -1;
    }
    if ((unsigned)o->placement >= GPU_PLACEMENT_COUNT) {
        snprintf(err, n, "placement: unknown policy %d", (int)o->placement);
        return -1;
    }
    return 0;
}

/* The nodes kept by nodes_fraction; -1 with a message when none is. */
static int keep_nodes(gpu_tasks *t, char *err, size_t n)
{
    const cluster_trace *c = t->trace;
    double f = t->options.nodes_fraction;
    if (!(t->kept = malloc((c->nnodes ? c->nnodes : 1) * sizeof *t->kept)))
        sim_out_of_memory("out of memory creating a GPU task replay");
    for (size_t i = 0; i < c->nnodes; i++)
        if (f >= 1 || floor((double)(i + 1) * f) > floor((double)i * f))
            t->kept[t->nkept++] = i;
    if (t->nkept == 0) {
        snprintf(err, n, "nodes_fraction %g keeps none of the %zu nodes", f, c->nnodes);
        return -1;
    }
    return 0;
}

gpu_tasks *gpu_tasks_create(sim_engine *engine, const cluster_trace *trace,
                            const gpu_tasks_options *options, char *err, size_t err_size)
{
    if (check_options(options, err, err_size) != 0)
        return NULL;
    gpu_tasks *t = calloc(1, sizeof *t);
    if (!t)
        sim_out_of_memory("out of memory creating a GPU task replay");
    t->engine = engine;
    t->trace = trace;
    t->options = *options;
    t->head = t->tail = NONE;
    if (keep_nodes(t, err, err_size) != 0) {
        gpu_tasks_free(t);
        return NULL;
    }
    size_t ntasks = trace->ntasks;
    t->tasks = calloc(ntasks ? ntasks : 1, sizeof *t->tasks);
    t->order = malloc((ntasks ? ntasks : 1) * sizeof *t->order);
    gpu_demand *measure = malloc((ntasks ? ntasks : 1) * sizeof *measure);
    const cluster_node **nodes = malloc(t->nkept * sizeof *nodes);
    if (!t->tasks || !t->order || !measure || !nodes)
        sim_out_of_memory("out of memory creating a GPU task replay");
    double first_s = INFINITY;
    for (size_t i = 0; i < ntasks; i++)
        first_s = fmin(first_s, trace->tasks[i].arrival_s);
    size_t nmeasure = 0;
    for (size_t i = 0; i < ntasks; i++) {
        const cluster_task *c = &trace->tasks[i];
        task_state *s = &t->tasks[i];
        *s = (task_state){ .owner = t, .demand = demand_of(options, c),
                           .requested_milli = c->num_gpu * c->gpu_milli, .slot = { NONE, 0 },
                           .arrival_s = (c->arrival_s - first_s) / options->speedup,
                           .duration_s = c->duration_s, .placed_s = NAN, .prev = NONE,
                           .next = NONE, .replayed = replayed(options, c) };
        if (s->replayed) {
            t->order[t->norder++] = i;
            measure[nmeasure++] = s->demand;
            t->trace_end_s = fmax(t->trace_end_s, s->arrival_s + s->duration_s);
        }
    }
    sort_order(t->order, t->norder, t->tasks);
    for (size_t k = 0; k < t->nkept; k++)
        nodes[k] = &trace->nodes[t->kept[k]];
    t->fleet = gpu_fleet_create(nodes, t->nkept, measure, nmeasure, err, err_size);
    free(measure);
    free(nodes);
    if (!t->fleet) {
        gpu_tasks_free(t);
        return NULL;
    }
    for (size_t i = 0; i < ntasks; i++) /* the models each task accepts, now numbered */
        for (size_t m = 0; m < gpu_fleet_models(t->fleet); m++)
            if (cluster_task_accepts(&trace->tasks[i], gpu_fleet_model_name(t->fleet, m)))
                t->tasks[i].demand.models |= (uint64_t)1 << m;
    double now = sim_engine_now(engine);
    sim_histogram_init(&t->stats.pending_hist_s);
    sim_stat_reset(&t->stats.pending_s);
    sim_timeavg_init(&t->stats.allocation, now, 0);
    sim_timeavg_init(&t->stats.requested, now, 0);
    sim_timeavg_init(&t->stats.fragmentation, now, gpu_fleet_fragmentation(t->fleet));
    sim_timeavg_init(&t->stats.waiting, now, 0);
    t->bucket_start_s = now;
    return t;
}

void gpu_tasks_free(gpu_tasks *t)
{
    if (!t)
        return;
    gpu_fleet_free(t->fleet);
    sim_histogram_release(&t->stats.pending_hist_s);
    free(t->kept);
    free(t->tasks);
    free(t->order);
    free(t);
}

/* ---- the replay ---- */

static void observe(gpu_tasks *t)
{
    double now = sim_engine_now(t->engine);
    double capacity = (double)gpu_fleet_capacity_milli(t->fleet);
    gpu_tasks_stats *s = &t->stats;
    sim_timeavg_set(&s->allocation, now,
                    capacity > 0 ? (double)gpu_fleet_allocated_milli(t->fleet) / capacity : 0);
    sim_timeavg_set(&s->requested, now, capacity > 0 ? (double)t->requested_milli / capacity : 0);
    sim_timeavg_set(&s->fragmentation, now, gpu_tasks_fragmentation(t));
    sim_timeavg_set(&s->waiting, now, (double)t->waiting);
}

static void on_departure(sim_engine *engine, void *data);

static void place(gpu_tasks *t, size_t i, gpu_slot slot)
{
    task_state *s = &t->tasks[i];
    double now = sim_engine_now(t->engine);
    gpu_fleet_take(t->fleet, slot, &s->demand);
    s->slot = slot;
    s->placed_s = now;
    t->requested_milli += s->requested_milli;
    t->stats.placed++;
    sim_stat_add(&t->stats.pending_s, now - s->arrival_s);
    sim_histogram_add(&t->stats.pending_hist_s, now - s->arrival_s);
    sim_event_schedule(t->engine, now + s->duration_s, EVENT_RELEASE, on_departure, s);
}

static void enqueue(gpu_tasks *t, size_t i)
{
    task_state *s = &t->tasks[i];
    s->prev = t->tail;
    s->next = NONE;
    if (t->tail != NONE)
        t->tasks[t->tail].next = (int32_t)i;
    else
        t->head = (int32_t)i;
    t->tail = (int32_t)i;
    t->waiting++;
    t->waiting_gpu += s->demand.num_gpu > 0;
}

static void dequeue(gpu_tasks *t, size_t i)
{
    task_state *s = &t->tasks[i];
    if (s->prev != NONE)
        t->tasks[s->prev].next = s->next;
    else
        t->head = s->next;
    if (s->next != NONE)
        t->tasks[s->next].prev = s->prev;
    else
        t->tail = s->prev;
    s->prev = s->next = NONE;
    t->waiting--;
    t->waiting_gpu -= s->demand.num_gpu > 0;
}

static bool fits_empty_somewhere(const gpu_tasks *t, const gpu_demand *d)
{
    for (size_t n = 0; n < t->nkept; n++)
        if (gpu_fleet_could_fit(t->fleet, n, d))
            return true;
    return false;
}

static void on_arrival(sim_engine *engine, void *data)
{
    gpu_tasks *t = data;
    size_t i = t->order[t->next_arrival++];
    task_state *s = &t->tasks[i];
    t->stats.arrived++;
    if (!fits_empty_somewhere(t, &s->demand)) {
        t->stats.rejected++;
    } else {
        gpu_slot slot = gpu_fleet_choose(t->fleet, t->options.placement, &s->demand);
        if (slot.node != NONE)
            place(t, i, slot);
        else
            enqueue(t, i);
    }
    if (t->next_arrival < t->norder)
        sim_event_schedule(engine, t->tasks[t->order[t->next_arrival]].arrival_s,
                           EVENT_MODEL, on_arrival, t);
    observe(t);
}

static void on_departure(sim_engine *engine, void *data)
{
    (void)engine;
    task_state *s = data;
    gpu_tasks *t = s->owner;
    size_t node = (size_t)s->slot.node;
    gpu_fleet_give(t->fleet, s->slot, &s->demand);
    t->requested_milli -= s->requested_milli;
    t->stats.completed++;
    for (int32_t i = t->head, next; i != NONE; i = next) {
        next = t->tasks[i].next;
        const gpu_demand *d = &t->tasks[i].demand;
        if (gpu_fleet_fits(t->fleet, node, d)) {
            dequeue(t, (size_t)i);
            place(t, (size_t)i, gpu_fleet_choose_on(t->fleet, t->options.placement, node, d));
        }
    }
    observe(t);
}

void gpu_tasks_start(gpu_tasks *t)
{
    if (t->norder > 0) {
        double first_s = t->tasks[t->order[0]].arrival_s;
        sim_event_schedule(t->engine, sim_engine_now(t->engine) + first_s, EVENT_MODEL,
                           on_arrival, t);
    }
}

/* ---- results ---- */

const gpu_tasks_stats *gpu_tasks_get_stats(const gpu_tasks *t) { return &t->stats; }
size_t gpu_tasks_waiting(const gpu_tasks *t) { return t->waiting; }
size_t gpu_tasks_nodes(const gpu_tasks *t) { return t->nkept; }
uint64_t gpu_tasks_gpus(const gpu_tasks *t)
{
    return gpu_fleet_capacity_milli(t->fleet) / CLUSTER_GPU_MILLI;
}
double gpu_tasks_trace_end_s(const gpu_tasks *t) { return t->trace_end_s; }
const gpu_fleet *gpu_tasks_fleet(const gpu_tasks *t) { return t->fleet; }

double gpu_tasks_last_arrival_s(const gpu_tasks *t)
{
    return t->norder ? t->tasks[t->order[t->norder - 1]].arrival_s : 0;
}

void gpu_tasks_reset_stats(gpu_tasks *t)
{
    gpu_tasks_stats *s = &t->stats;
    double now = sim_engine_now(t->engine);
    /* buckets measure differences of integrals: keep them continuous across the restart */
    t->bucket_allocation -= sim_timeavg_integral(&s->allocation, now);
    t->bucket_fragmentation -= sim_timeavg_integral(&s->fragmentation, now);
    t->bucket_waiting -= sim_timeavg_integral(&s->waiting, now);
    t->bucket_arrived -= s->arrived; /* modular arithmetic: the differences stay right */
    t->bucket_placed -= s->placed;
    s->arrived = s->placed = s->rejected = s->completed = 0;
    sim_stat_reset(&s->pending_s);
    sim_histogram_clear(&s->pending_hist_s);
    sim_timeavg_restart(&s->allocation, now);
    sim_timeavg_restart(&s->requested, now);
    sim_timeavg_restart(&s->fragmentation, now);
    sim_timeavg_restart(&s->waiting, now);
}

double gpu_tasks_fragmentation(const gpu_tasks *t)
{
    uint64_t capacity = gpu_fleet_capacity_milli(t->fleet);
    if (capacity == 0)
        return 0;
    if (t->waiting_gpu > 0) /* it fits nowhere: every free thousandth is a fragment to it */
        return 1 - (double)gpu_fleet_allocated_milli(t->fleet) / (double)capacity;
    return gpu_fleet_fragmentation(t->fleet);
}

int gpu_tasks_node_of(const gpu_tasks *t, size_t i, uint64_t *gpus)
{
    const task_state *s = &t->tasks[i];
    if (gpus)
        *gpus = s->slot.node == NONE ? 0 : s->slot.gpus;
    return s->slot.node == NONE ? NONE : (int)t->kept[s->slot.node];
}

double gpu_tasks_pending_s(const gpu_tasks *t, size_t i)
{
    const task_state *s = &t->tasks[i];
    return s->placed_s - s->arrival_s; /* NaN while never placed */
}

gpu_tasks_bucket_stats gpu_tasks_bucket(gpu_tasks *t, double now_s)
{
    const gpu_tasks_stats *s = &t->stats;
    double span = now_s - t->bucket_start_s;
    double allocation = sim_timeavg_integral(&s->allocation, now_s);
    double fragmentation = sim_timeavg_integral(&s->fragmentation, now_s);
    double waiting = sim_timeavg_integral(&s->waiting, now_s);
    gpu_tasks_bucket_stats b = {
        .allocation_rate = span > 0 ? (allocation - t->bucket_allocation) / span : s->allocation.value,
        .fragmentation = span > 0 ? (fragmentation - t->bucket_fragmentation) / span
                                  : s->fragmentation.value,
        .tasks_pending = span > 0 ? (waiting - t->bucket_waiting) / span : s->waiting.value,
        .arrived = s->arrived - t->bucket_arrived,
        .placed = s->placed - t->bucket_placed,
    };
    t->bucket_start_s = now_s;
    t->bucket_allocation = allocation;
    t->bucket_fragmentation = fragmentation;
    t->bucket_waiting = waiting;
    t->bucket_arrived = s->arrived;
    t->bucket_placed = s->placed;
    return b;
}

void gpu_tasks_record_metrics(sim_metrics *m, const char *workload, const gpu_tasks *t,
                              double end_s)
{
    const gpu_tasks_stats *s = &t->stats;
    const char *w = workload;
    sim_metrics_add(m, "workload", w, "nodes", "nodes", (double)t->nkept);
    sim_metrics_add(m, "workload", w, "gpus", "gpus", (double)gpu_tasks_gpus(t));
    sim_metrics_add(m, "workload", w, "tasks_arrived", "tasks", (double)s->arrived);
    sim_metrics_add(m, "workload", w, "tasks_placed", "tasks", (double)s->placed);
    sim_metrics_add(m, "workload", w, "tasks_rejected", "tasks", (double)s->rejected);
    sim_metrics_add(m, "workload", w, "tasks_completed", "tasks", (double)s->completed);
    sim_metrics_add(m, "workload", w, "tasks_pending_at_end", "tasks", (double)t->waiting);
    sim_metrics_add(m, "workload", w, "tasks_pending_mean", "tasks",
                    sim_timeavg_mean(&s->waiting, end_s));
    sim_metrics_add(m, "workload", w, "allocation_rate_mean", "1",
                    sim_timeavg_mean(&s->allocation, end_s));
    sim_metrics_add(m, "workload", w, "gpu_allocation_max", "1", s->allocation.max);
    sim_metrics_add(m, "workload", w, "gpu_requested_mean", "1",
                    sim_timeavg_mean(&s->requested, end_s));
    sim_metrics_add(m, "workload", w, "fragmentation_mean", "1",
                    sim_timeavg_mean(&s->fragmentation, end_s));
    sim_metrics_add(m, "workload", w, "pending_mean_s", "s", sim_stat_mean(&s->pending_s));
    sim_metrics_add(m, "workload", w, "pending_p99_s", "s",
                    sim_histogram_quantile(&s->pending_hist_s, 0.99));
    sim_metrics_add(m, "workload", w, "pending_max_s", "s",
                    s->pending_s.n ? s->pending_s.max : NAN);
}
