/* Training job specs, closed-form progress and step times from the model (see
 * training.h). */
#include "models/training.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/memory.h"
#include "models/perf.h"
#include "models/perf_training.h"
#include "models/training_schedule.h"

void training_spec_release(training_spec *s)
{
    if (!s)
        return;
    free(s->name);
    s->name = NULL;
}

void job_trace_release(job_trace *t)
{
    if (!t)
        return;
    free(t->at_s);
    free(t->gpus);
    free(t->duration_s);
    free(t->priority);
    *t = (job_trace){ 0 };
}

void job_stream_spec_release(job_stream_spec *s)
{
    if (!s)
        return;
    free(s->name);
    s->name = NULL;
    free(s->streams);
    s->streams = NULL;
    sim_dist_release(&s->interarrival_s);
    sim_dist_release(&s->gpus);
    sim_dist_release(&s->duration_s);
    job_trace_release(&s->trace);
}

const char *scheduler_policy_name(scheduler_policy p)
{
    switch (p) {
    case SCHED_FIFO:
        return "fifo";
    case SCHED_PRIORITY:
        return "priority";
    case SCHED_BACKFILL:
        return "backfill";
    }
    return "?";
}

/* ---- closed-form progress ------------------------------------------------------------ */

double training_segment_s(const checkpoint_spec *c, double restart_s, double remaining_s)
{
    if (remaining_s <= 0)
        return restart_s;
    if (c->every_s <= 0)
        return restart_s + remaining_s;
    double m = ceil(remaining_s / c->every_s) - 1;
    return restart_s + m * (c->every_s + c->write_s) + (remaining_s - m * c->every_s);
}

void training_progress(const checkpoint_spec *c, double restart_s, double remaining_s,
                       double elapsed_s, double *done_s, double *saved_s)
{
    double x = elapsed_s - restart_s;
    *done_s = *saved_s = 0;
    if (x <= 0 || remaining_s <= 0)
        return;
    if (c->every_s <= 0) {
        *done_s = fmin(x, remaining_s);
        return;
    }
    double cycle = c->every_s + c->write_s;
    double k = floor(x / cycle);
    double within = x - k * cycle;
    *done_s = fmin(k * c->every_s + fmin(within, c->every_s), remaining_s);
    *saved_s = fmin(k * c->every_s, remaining_s);
}

/* ---- from a model ------------------------------------------------------------------- */

int training_job_from_model(training_spec *out, const model_spec *m, const device_spec *d,
                            const perf_profile *profile, precision prec, unsigned gpus,
                            training_constraints c, training_schedule schedule,
                            unsigned seq_len, unsigned global_batch, double tokens,
                            double steps, char *err, size_t err_size)
{
    bool dualpipe = c.dualpipe || schedule == TRAINING_SCHEDULE_DUALPIPE;
    perf_profile p = profile ? *profile : perf_default_profile(d);
    training_estimate e;
    if (!training_plan_scheduled(m, d, &p, prec, gpus, seq_len, global_batch, c, schedule,
                                 &e)) {
        const training_memory *mem = &e.memory;
        if (mem->usable_bytes <= 0 && e.refusal[0]) { /* a stated degree no setup takes */
            snprintf(err, err_size, "%s", e.refusal);
            return -2;
        }
        if (mem->usable_bytes <= 0 && dualpipe) {
            snprintf(err, err_size, "no DualPipe setup of %u sequences on %u GPUs: it needs pp "
                     "even and an even number of at least 2 pp micro-batches a data-parallel "
                     "rank", global_batch, gpus);
            return -2;
        }
        if (mem->usable_bytes <= 0) { /* no setup was tried */
            snprintf(err, err_size, "a global batch of %u sequences cannot be split over %u "
                     "GPUs (each data-parallel rank needs one)", global_batch, gpus);
            return -2;
        }
        /* the memory: the fewest GPUs that fit, the planner free but for adapters and
         * schedule */
        training_constraints free = TRAINING_FREE;
        free.lora = c.lora;
        free.dualpipe = c.dualpipe;
        free.zero_bubble = c.zero_bubble;
        training_constraints_state_from(&free, &c);
        unsigned fit = 0;
        for (unsigned g = gpus * 2; g && g <= 65536 && !fit; g *= 2) {
            training_estimate probe;
            if (training_plan_scheduled(m, d, &p, prec, g, seq_len, global_batch, free,
                                        schedule, &probe))
                fit = g;
        }
        char smallest[96];
        if (fit)
            snprintf(smallest, sizeof smallest, "the smallest that fits is %u GPUs", fit);
        else
            snprintf(smallest, sizeof smallest, "no power-of-two multiple up to 65536 GPUs "
                     "fits a global batch of %u", global_batch);
        snprintf(err, err_size, "%s on %u %s: needs %.1f GB per GPU (weights %.1f, gradients "
                 "%.1f, optimizer %.1f, activations %.1f) with %.1f GB usable; %s", m->name,
                 gpus, d->name, mem->total_bytes / 1e9, mem->weights_bytes / 1e9,
                 mem->gradient_bytes / 1e9, mem->optimizer_bytes / 1e9,
                 mem->activation_bytes / 1e9, mem->usable_bytes / 1e9, smallest);
        return -1;
    }
    out->gpus = gpus;
    out->step_s = e.step_s;
    out->tokens_per_step = e.tokens_per_step;
    out->mfu = e.mfu;
    /* products, attention and recomputation bound by compute; norms, activations and
     * the optimizer by memory; the exposed collectives; the bubble idle */
    out->work_share = (perf_phases){
        .compute_s = (e.matmul_s + e.attention_s + e.recompute_s) / e.step_s,
        .memory_s = (e.memory_pass_s + e.optimizer_s) / e.step_s,
        .comm_s = (e.tp_comm_s + e.cp_comm_s + e.ep_comm_s + e.dp_comm_s) / e.step_s,
    };
    out->setup = e.setup;
    out->steps = tokens > 0 ? ceil(tokens / e.tokens_per_step) : steps;
    return 0;
}
