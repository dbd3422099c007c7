/* `fleetsim estimate` output: a readable analysis, or metric,value,unit rows. */
#ifndef FLEETSIM_OUTPUT_ESTIMATE_TEXT_H
#define FLEETSIM_OUTPUT_ESTIMATE_TEXT_H

#include <stdio.h>

#include "models/estimate.h"

void output_estimate_text(FILE *out, const model_spec *m, const device_spec *d,
                          const estimate_request *req, const estimate_result *r);

void output_estimate_csv(FILE *out, const model_spec *m, const device_spec *d,
                         const estimate_request *req, const estimate_result *r);

/* With a calibration profile: the datasheet's answer beside the profile's, for the
 * figures a reader compares (first token, decode step, throughput, training), and their
 * ratio; the CSV form is datasheet_* rows. */
void output_estimate_compare_text(FILE *out, const char *profile, const estimate_result *datasheet,
                                  const estimate_result *calibrated);
void output_estimate_compare_csv(FILE *out, const estimate_result *datasheet);

#endif
