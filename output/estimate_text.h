/* `fleetsim estimate` output: a readable analysis, or metric,value,unit rows. */
#ifndef FLEETSIM_OUTPUT_ESTIMATE_TEXT_H
#define FLEETSIM_OUTPUT_ESTIMATE_TEXT_H

#include <stdio.h>

#include "models/estimate.h"

void output_estimate_text(FILE *out, const model_spec *m, const device_spec *d,
                          const estimate_request *req, const estimate_result *r);

void output_estimate_csv(FILE *out, const model_spec *m, const device_spec *d,
                         const estimate_request *req, const estimate_result *r);

#endif
