/* The details `fleetsim check` prints under each pool and workload (issue 18, 7): costs,
 * SLOs, round trips, the autoscaler, noisy neighbours, failures, training jobs and job
 * streams, "none" for what is not set. */
#ifndef FLEETSIM_OUTPUT_SCENARIO_DETAILS_H
#define FLEETSIM_OUTPUT_SCENARIO_DETAILS_H

#include <stdio.h>

#include "models/scenario.h"

void output_pool_details(FILE *out, const pool_spec *p);
void output_inference_details(FILE *out, const inference_spec *w);
/* Speculative decoding's settings, a line when the workload speculates (none otherwise,
 * so outputs of scenarios without it stay as they were). */
void output_speculative_details(FILE *out, const scenario *sc, const inference_spec *w);
/* "    lora              500 adapters of rank 16 on q, k, v, o, ...": nothing without lora. */
void output_lora_details(FILE *out, const scenario *sc, const inference_spec *w);
/* Every fs.training and fs.job_stream, a line or two each. */
void output_training_details(FILE *out, const scenario *sc);

#endif
