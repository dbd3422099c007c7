/* A training plan's pipeline schedule as a scenario (fs.training's parallelism.schedule)
 * or the command line (estimate --schedule) names it, and the planner run within it.
 *
 * training_constraints says a schedule by its fields (virtual_stages, dualpipe,
 * zero_bubble); what it cannot say is "interleaved, the chunks a stage left free", which
 * training_plan_scheduled answers by planning at 2, 4 and 8 chunks and keeping the
 * fastest: the planner's own range, less its 1F1B. */
#ifndef FLEETSIM_MODELS_TRAINING_SCHEDULE_H
#define FLEETSIM_MODELS_TRAINING_SCHEDULE_H

#include <stdbool.h>

#include "models/device.h"
#include "models/llm.h"
#include "models/perf.h"
#include "models/perf_training.h"

typedef enum training_schedule {
    TRAINING_SCHEDULE_PLANNED,     /* the planner's: 1F1B or interleaved */
    TRAINING_SCHEDULE_1F1B,        /* one model chunk a stage */
    TRAINING_SCHEDULE_INTERLEAVED, /* 2 or more chunks a stage (Narayanan et al. 2021) */
    TRAINING_SCHEDULE_ZERO_BUBBLE, /* ZB-H1 (Qi et al. 2024), one chunk a stage */
    TRAINING_SCHEDULE_DUALPIPE,    /* DeepSeek's DualPipe, one chunk a stage, pp even */
} training_schedule;

/* The schedule's name as the command line writes it: "planned", "1f1b", "interleaved",
 * "zero-bubble", "dualpipe". */
const char *training_schedule_name(training_schedule s);

/* Sets c's schedule fields for s: 1F1B, ZB-H1 and DualPipe one chunk a stage (where c
 * states none) and their flag; "planned" and "interleaved" leave c as it is.  A stated
 * chunk count that contradicts the schedule (2 or more with a one-chunk schedule) is the
 * caller's to refuse, with its own key's name, before. */
void training_schedule_impose(training_constraints *c, training_schedule s);

/* perf_training_plan_within with c under schedule s (training_schedule_impose); the
 * interleaved schedule with no chunk count stated takes the fastest of 2, 4 and 8 that
 * fits, and when none does, out holds the refusal at 2 (the fewest chunks hold the
 * least).  *out is zeroed first, so what the planner leaves (its early refusals fill
 * only refusal) reads 0.  Returns whether a setup fits, as perf_training_plan_within. */
bool training_plan_scheduled(const model_spec *m, const device_spec *d, const perf_profile *p,
                             precision prec, unsigned gpus, unsigned seq_len,
                             unsigned global_batch, training_constraints c, training_schedule s,
                             training_estimate *out);

#endif
