/* Why a workload's tensor parallelism is what it is (issue 39, 3): the throughput
 * ranking alone, or the trials against its SLO (models/slo_tp.h), as a short reason for
 * a run's header and as a table for `fleetsim check`. */
#ifndef FLEETSIM_OUTPUT_TP_CHOICE_TEXT_H
#define FLEETSIM_OUTPUT_TP_CHOICE_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "models/scenario.h"

/* "" where tp was given; else, e.g., "chosen: the most tokens/s per GPU", "chosen for
 * the SLO: tp 2 misses it", "chosen: no tp tried meets the SLO, the most requests within
 * it".  Returns buf. */
char *output_tp_choice_text(char *buf, size_t size, const inference_spec *w);

/* With trials: an indented line on what was simulated, then one per tp tried, its p99s
 * against the stated limits, the share within them, and which was kept; nothing without. */
void output_tp_trials_text(FILE *out, const inference_spec *w);

#endif
