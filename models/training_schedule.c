/* Training schedules by name, and the planner within one (see training_schedule.h). */
#include "models/training_schedule.h"

#include <stdio.h>

const char *training_schedule_name(training_schedule s)
{
    switch (s) {
    case TRAINING_SCHEDULE_PLANNED:
        return "planned";
    case TRAINING_SCHEDULE_1F1B:
        return "1f1b";
    case TRAINING_SCHEDULE_INTERLEAVED:
        return "interleaved";
    case TRAINING_SCHEDULE_ZERO_BUBBLE:
        return "zero-bubble";
    case TRAINING_SCHEDULE_DUALPIPE:
        return "dualpipe";
    }
    return "?";
}

void training_schedule_impose(training_constraints *c, training_schedule s)
{
    if (s == TRAINING_SCHEDULE_PLANNED || s == TRAINING_SCHEDULE_INTERLEAVED)
        return;
    if (!c->virtual_stages)
        c->virtual_stages = 1;
    c->zero_bubble = s == TRAINING_SCHEDULE_ZERO_BUBBLE;
    c->dualpipe = s == TRAINING_SCHEDULE_DUALPIPE;
}

bool training_plan_scheduled(const model_spec *m, const device_spec *d, const perf_profile *p,
                             precision prec, unsigned gpus, unsigned seq_len,
                             unsigned global_batch, training_constraints c, training_schedule s,
                             training_estimate *out)
{
    *out = (training_estimate){ 0 }; /* the planner's early refusals fill only refusal */
    if (s == TRAINING_SCHEDULE_INTERLEAVED && c.virtual_stages == 1) {
        snprintf(out->refusal, sizeof out->refusal, "the interleaved schedule needs 2 or more "
                 "model chunks a stage; 1 stated");
        return false;
    }
    training_schedule_impose(&c, s);
    if (s != TRAINING_SCHEDULE_INTERLEAVED || c.virtual_stages)
        return perf_training_plan_within(m, d, p, prec, gpus, seq_len, global_batch, c, out);
    bool found = false;
    for (unsigned v = 2; v <= 8; v *= 2) {
        training_estimate e = { 0 };
        c.virtual_stages = v;
        bool fits = perf_training_plan_within(m, d, p, prec, gpus, seq_len, global_batch, c, &e);
        if (fits && (!found || e.step_s / e.tokens_per_step
                                   < out->step_s / out->tokens_per_step)) {
            *out = e;
            found = true;
        } else if (!found && v == 2) {
            *out = e;
        }
    }
    return found;
}
