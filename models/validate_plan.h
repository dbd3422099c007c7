/* A validation row's parallel configuration as data: the `parallelism` cell of
 * tests/validation/published.csv, `KEY=value` tokens separated by spaces (commas are
 * tolerated), each key at most once:
 *   TP PP CP EP ETP VPP DP  degrees, whole numbers 1-1000000 (VPP: model chunks a stage)
 *   MBS GA                  sequences a micro-batch; micro-batches a data-parallel rank a step
 *   ZERO                    0-3 (FSDP FULL_SHARD is 3)
 *   HSDP                    ZeRO-3 sharded within groups of this many ranks (implies ZERO=3)
 *   SCHEDULE                1f1b | interleaved (needs VPP > 1) | zero-bubble | dualpipe
 *   RECOMPUTE               none | selective | full (every layer, or RECOMPUTE_LAYERS of a stage)
 *   RECOMPUTE_LAYERS        with RECOMPUTE=full: the layers of a stage recomputed
 *   REPLICAS                a serving row's copies of the model, TP devices each
 *   SP                      on | off: TP with or without sequence parallelism (else the
 *                           engine's way)
 *   DP_OVERLAP              on | off: the data-parallel collectives under the passes, or in
 *                           series with them (Megatron-LM without --overlap-grad-reduce)
 *   TP_OVERLAP              on | off: tensor parallelism's collectives under the products
 *                           (the engine's share; Megatron's --tp-comm-overlap) or in series
 *   DISPATCHER              alltoall | deepep | hybridep: expert parallelism's token
 *                           dispatcher, as Megatron names them (else the engine's)
 *   EP_OVERLAP              on | off: the all-to-alls under another micro-batch's
 *                           computation (Megatron's --overlap-moe-expert-parallel-comm)
 * A key not stated is left to the planner (training) or derived (DP from the GPUs, the
 * replicas from TP).  Parsing knows no model and no row: what the stated values imply for
 * a row's GPUs and batch is validate_plan_check's. */
#ifndef FLEETSIM_MODELS_VALIDATE_PLAN_H
#define FLEETSIM_MODELS_VALIDATE_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "models/perf_training.h"

/* The keys, in the order the known-keys list names them. */
typedef enum validate_plan_key {
    PLAN_TP, PLAN_PP, PLAN_CP, PLAN_EP, PLAN_ETP, PLAN_VPP, PLAN_DP, PLAN_MBS, PLAN_GA,
    PLAN_ZERO, PLAN_HSDP, PLAN_SCHEDULE, PLAN_RECOMPUTE, PLAN_RECOMPUTE_LAYERS, PLAN_REPLICAS,
    PLAN_SP, PLAN_DP_OVERLAP, PLAN_DISPATCHER, PLAN_EP_OVERLAP, PLAN_TP_OVERLAP,
    PLAN_KEYS
} validate_plan_key;

/* The largest degree or count a token may give: past it a table is refused, not cast. */
#define VALIDATE_PLAN_MAX 1000000u

typedef struct validate_plan {
    unsigned stated;               /* bit 1u << key for each key given */
    /* What a training row imposes on the planner (TRAINING_FREE where nothing is stated;
     * the framework's bytes a parameter are not the cell's: 0).  RECOMPUTE=full without a
     * count leaves recompute_layers -1 and sets recompute_all: the model's layers, which
     * the plan does not know (validate_plan_training) */
    training_constraints training;
    bool recompute_all;
    unsigned accumulation;         /* GA; 0: not stated */
    unsigned replicas;             /* REPLICAS; 0: not stated */
} validate_plan;

/* Parses text (a cell; "" is a plan with nothing stated) into *out.  0; -1 with a
 * message in err ("unknown key 'VP' in 'VP=2' (known: TP, PP, ...)", "repeated key
 * 'TP' in 'TP=4'", a malformed token, a value out of range, keys that contradict each
 * other), which names no file: the caller knows where the cell came from. */
int validate_plan_parse(const char *text, validate_plan *out, char *err, size_t err_size);

bool validate_plan_has(const validate_plan *p, validate_plan_key key);

/* The key's name ("TP", ...), or NULL past the last. */
const char *validate_plan_key_name(validate_plan_key key);

/* The planner's constraints for a model of `layers` layers: p->training with
 * RECOMPUTE=full's every layer made `layers` (more than a stage has: all of it). */
training_constraints validate_plan_training(const validate_plan *p, unsigned layers);

/* Checks the stated DP and GA against what the row implies: gpus / (TP x PP x CP) where
 * TP and PP are stated (CP 1 unless stated), and global_batch / (DP x MBS) micro-batches a
 * rank where MBS is stated.  Where the stated values fix all but one of DP, MBS and GA in
 * DP x MBS x GA = global_batch, the last is derived into *c (c->dp, c->micro_batch) so
 * the planner keeps to it.  true; false with the mismatch in why (the row is then not
 * predicted: the table states something that cannot hold). */
bool validate_plan_check(const validate_plan *p, double gpus, double global_batch,
                         training_constraints *c, char *why, size_t why_size);

#endif
