/* The keys of an fs.inference workload for models that come and go on a pool:
 * replicas (how many to start with, or to load on demand), scale_to_zero (the idle time
 * after which they are all given back) and cold_start (how long a replica ordered
 * during the run takes to load its weights).
 *
 * cold_start is a duration, or { bandwidth = "2GB/s", fixed = "10s" }: fixed plus the
 * replica's weights over the bandwidth.  Absent, it is the weights over
 * COLD_START_BANDWIDTH (below), and it applies only where the workload scales to zero or
 * shares its pool with other models (models/run_inference.c): a workload alone on its
 * pool keeps the behaviour it always had, its provisioning delay standing for its
 * start-up. */
#ifndef FLEETSIM_LUA_COLD_START_LOAD_H
#define FLEETSIM_LUA_COLD_START_LOAD_H

#include "lua/fields.h"
#include "models/scenario.h"

/* A replica's load rate when the scenario gives none, bytes a second: 140 GB of
 * Llama-2-70B fp16 weights loaded in 84 s by PyTorch from a server's local SSD, as
 * ServerlessLLM measured it (Fu et al., OSDI 2024, arXiv 2401.14351, section 1): about
 * 1.67 GB/s.  A loader built for it reaches several times more; a download from
 * object storage less, so a scenario that knows its storage states it. */
#define COLD_START_BANDWIDTH (140e9 / 84.0)

/* Reads them into out once its model, device, precision, tp and pool are known (the
 * replica's weights: weights_bytes a device x tp); 0, or -1 with the message in c. */
int cold_start_load(load_context *c, const fields_object *w, const pool_spec *p,
                    double weights_bytes, inference_spec *out);

#endif
