/* Training workloads of a scenario file: fs.training { ... } (one job), fs.job_stream
 * { ... } (jobs arriving at random or replayed from a CSV trace), and a pool's
 * `scheduler` option, into models/training.h's specs.  Mistakes are reported as
 * "file.lua:12: workloads.tune.gpus: ..." through lua/fields.h. */
#ifndef FLEETSIM_LUA_TRAINING_LOAD_H
#define FLEETSIM_LUA_TRAINING_LOAD_H

#include <stddef.h>

#include "lua/fields.h"
#include "models/catalog.h"
#include "models/training.h"

/* Keys each constructor accepts (NULL-ended; checked by the converters below). */
extern const char *const TRAINING_KEYS[];
extern const char *const JOB_STREAM_KEYS[];

/* fs.training { model, tokens | steps, gpus, parallelism = { tp, pp, cp, ep, etp, vpp, dp,
 * micro_batch, zero, hsdp, recompute, schedule }, lora, precision, seq_len, global_batch,
 * pool, at, priority, checkpoint = { every, write }, restart } (each parallelism key given
 * imposed on the planner, the rest its choice; recompute "none", "selective", "full" or
 * layers a stage; schedule "planned", "1f1b", "interleaved", "zero_bubble" or "dualpipe"
 * (pp even); lora: adapters on the frozen model)
 * on pool number `pool` whose GPUs are pool_gpu (a device of cat, or NULL for a pool
 * without GPUs).  With a model, the step time comes from the performance model (a
 * configuration that does not fit is refused with the numbers); without one, `steps`
 * and `step` (seconds per step) give the work.  The pool key itself is the caller's to
 * resolve; profile (NULL: the device's defaults) is the pool's calibration.  Defaults: precision "bf16", seq_len 4096, global_batch 512, at 0, priority
 * 0, no checkpoints, restart 0.  out->name is the workload's name (the last part of
 * w->path).  Release out with training_spec_release, also after a failure. */
int training_load_convert(load_context *c, const fields_object *w, const catalog *cat, size_t pool,
                          const char *pool_gpu, const perf_profile *profile, training_spec *out);

/* fs.job_stream { pool, arrivals, gpus, duration, count, priority, checkpoint, restart }
 * or fs.job_stream { pool, trace = "jobs.csv", priority, checkpoint, restart }:
 * arrivals is fs.poisson { rate }, fs.constant_rate { rate } or a distribution of the
 * time between arrivals; gpus a number or a distribution (fs.empirical { values = { 1,
 * 2, 4, 8 } }); duration a distribution of the work in seconds at full speed; count the
 * jobs in all (absent: until the run's end).  A trace is a CSV with columns at_s, gpus,
 * duration_s and optionally priority (see job_trace_read).  Release out with
 * job_stream_spec_release, also after a failure. */
int training_load_convert_job_stream(load_context *c, const fields_object *w, size_t pool,
                                     job_stream_spec *out);

/* A pool's scheduler = "fifo" | "priority" | "backfill" (default "fifo"); the pool's
 * own key list must admit "scheduler". */
int training_load_convert_scheduler(load_context *c, const fields_object *pool,
                                    scheduler_spec *out);

#endif
