/* `fleetsim estimate`: the analytic answer for one model on one kind of device. */
#include <ctype.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/catalog.h"
#include "lua/cli.h"
#include "lua/cli_duration.h"
#include "lua/cli_getopt.h"
#include "lua/profile_load.h"
#include "models/estimate.h"
#include "output/estimate_text.h"

const char cli_estimate_usage[] =
    "usage: fleetsim estimate --model NAME --gpu NAME [--gpus N] [--tp N] [--pp N]\n"
    "                         [--precision fp32|fp16|bf16|fp8|int8|int4|fp4] [--batch B]\n"
    "                         [--prompt P] [--output O] [--train-tokens T] [--seq S]\n"
    "                         [--global-batch G] [--dualpipe] [--lora]\n"
    "                         [--training | --serving] [--train-tp N] [--cp N] [--ep N]\n"
    "                         [--etp N] [--vpp N] [--micro-batch B] [--zero 0|1|2|3]\n"
    "                         [--hsdp N] [--recompute none|selective|full|N]\n"
    "                         [--schedule 1f1b|interleaved|zero-bubble|dualpipe]\n"
    "                         [--sp on|off] [--dp-overlap on|off]\n"
    "                         [--tp-overlap on|off] [--dispatcher alltoall|deepep|hybridep]\n"
    "                         [--ep-overlap on|off]\n"
    "                         [--kv-precision fp16|bf16|fp8|fp32]\n"
    "                         [--layout tp|ep|attention-dp] [--profile FILE]\n"
    "                         [--model-file FILE] [--engine NAME]...\n"
    "                         [--speculative K --acceptance A [--draft MODEL]] [--csv]\n"
    "                         [--mtbf D] [--checkpoint-every D|auto] [--checkpoint-write D]\n"
    "                         [--restart D] [--straggler F]\n"
    "\n"
    "The analytic answer for one model on one kind of device: memory (weights, cache,\n"
    "training state), time to first token, time per output token at --batch, the best\n"
    "offline throughput on --gpus devices, and training step time, MFU, days and\n"
    "GPU-hours for --train-tokens (default 20 per parameter).  Defaults: --gpus 1,\n"
    "--precision the model's as released (fp16 unless its catalog entry says: fp8 for\n"
    "DeepSeek-V3/R1, fp4 for gpt-oss), --batch 1, --prompt 512, --output 256; --tp the\n"
    "smallest that fits.  --gpu takes any catalog device, CPUs included.  Training runs\n"
    "its products in bf16 (fp16 on a GPU without bf16 units, as a V100) where --precision\n"
    "is no training one on the device (fp8 without fp8 matrix units; int8, int4, fp4),\n"
    "and its block says so.\n"
    "The two halves, serving and training, are answered apart: with neither --serving\n"
    "nor --training both print, and a half that cannot be answered says why in its\n"
    "place while the other is answered (exit 0); --serving or --training prints that\n"
    "half alone (the other half's options are then refused, and under --training --tp\n"
    "is training's).  Exit 2 when every half asked is refused, with the causes.\n"
    "Training's plan: each of --train-tp N, --pp N, --cp N (context), --ep N (experts),\n"
    "--etp N (each expert's tensor parallelism), --vpp N (model chunks a stage),\n"
    "--micro-batch B (sequences), --zero S (ZeRO stage; 3 is FSDP), --hsdp N (ZeRO-3\n"
    "sharded within groups of N ranks), --recompute (none; selective: the attention\n"
    "core; full: every layer; or N layers a stage in full), --schedule (1f1b;\n"
    "interleaved; zero-bubble, ZB-H1; dualpipe), --sp (tensor parallelism with or\n"
    "without sequence parallelism; by default the training engine's way: DeepSpeed\n"
    "without, Megatron and FSDP with) and --dp-overlap (off: the data-parallel\n"
    "collectives in series with the passes, as Megatron-LM runs them when told not to\n"
    "overlap its gradients' reduction; on, the default: under them), --tp-overlap\n"
    "(off: tensor parallelism's collectives in series with the products, Megatron\n"
    "without --tp-comm-overlap; on, the default: the training engine's share of them\n"
    "hidden, Megatron's 0.48 on Hopper and later, none for DeepSpeed and FSDP),\n"
    "--dispatcher\n"
    "(expert parallelism's token dispatcher, as Megatron names them: alltoall, NCCL's,\n"
    "a copy of a token for each remote expert; deepep or hybridep, a copy for each\n"
    "remote node, forwarded within it; by default the training engine's, alltoall) and\n"
    "--ep-overlap (on: the dispatch and combine run while another micro-batch\n"
    "computes, Megatron's batch-level overlap, which needs ep > 1, the interleaved\n"
    "schedule where pp > 1 and no full or per-layer recomputation, and is refused with\n"
    "DualPipe and ZB-H1; off, the default: in series) is imposed\n"
    "as given and the planner picks the rest; a stated plan no setup can take is\n"
    "refused with its cause.\n"
    "--kv-precision sets the key-value cache's precision (16-bit by default, fp32 for\n"
    "fp32 weights).  A mixture of experts on several devices is tried three ways and\n"
    "served the fastest unless --layout says: tp (each expert split over the devices),\n"
    "ep (experts held whole, attention tensor parallel) or attention-dp (attention data\n"
    "parallel, the experts held whole, all-to-all dispatch and combine).  --profile\n"
    "takes a calibration profile (fleetsim calibrate) whose measured figures replace the\n"
    "device's datasheet ones.  The text output breaks one prefill (the first token) and\n"
    "one decode step down by operator (time, share, bound).  --model-file takes a Lua\n"
    "file that adds catalog entries (fs.models.NAME = { ... }, fs.devices.NAME = { ... },\n"
    "after local fs = require \"fleetsim\"), run in the sandbox and checked as the\n"
    "built-in catalog is, so --model and --gpu may name them.  --speculative K\n"
    "--acceptance A adds speculative decoding: K tokens proposed a round, each kept\n"
    "with probability A, by --draft MODEL on the same devices (none: a lookup that\n"
    "costs nothing on the GPU), against plain decoding at batches 1 to 1024.\n"
    "--dualpipe (--schedule dualpipe) trains on DeepSeek's DualPipe pipeline schedule\n"
    "(pp even, an even number of at least 2 pp micro-batches; twice the parameters a\n"
    "device) instead of the 1F1B or interleaved schedule the planner picks (it never\n"
    "picks DualPipe or zero-bubble by itself).  --lora trains low-rank adapters on the\n"
    "frozen model (no weight gradients or optimizer states for it; 4 N FLOPs a token).\n"
    "--engine names a serving engine of the catalog (its host work and how much of it\n"
    "the GPU's step hides, its memory reservations; default vllm, current vLLM) and,\n"
    "given again, a training engine (its bytes of state a parameter; default\n"
    "deepspeed): vllm, vllm-2024 (the engine the operator set measured), vllm-2025,\n"
    "vllm-0.5, sglang, tensorrt-llm, tensorrt-llm-cpp; deepspeed, megatron,\n"
    "pytorch-fsdp (lua/fleetsim/engines.lua).\n"
    "Training's days and GPU-hours are given productive (the steps alone) and expected\n"
    "with failures, restarts and checkpoint stalls (goodput), as a simulated fs.training\n"
    "job on a pool with spares would average: --mtbf D, a GPU's mean time between\n"
    "failures (default 50677h, Llama 3's interruptions; 0: none); --checkpoint-every D,\n"
    "training between checkpoints (default auto: Young's optimum sqrt(2 x write x the\n"
    "job's MTBF) in whole steps; 0: never); --checkpoint-write D, the pause to write one\n"
    "(default: the weights and optimizer state at 122 MB/s a GPU, Llama 3's storage);\n"
    "--restart D, paid after each failure (default 10m); --straggler F, the share by\n"
    "which slow GPUs stretch training (default 0).  D is a duration: 90s, 10m, 2h, 7d.\n"
    "--csv prints metric,value,unit rows.\n";

/* A whole number in [min, max] from an option, or -1 after saying why. */
static int option_count(const char *option, const char *value, double min, double max,
                        double *out)
{
    /* decimal digits, an exponent allowed (--train-tokens 15e12): strtod alone would also
     * take a sign, a space before, and hexadecimal (0x10) */
    char *end;
    double x = strtod(value, &end);
    if (!isdigit((unsigned char)value[0]) || strpbrk(value, "xX") || *end
        || !(x >= min && x <= max) || x != floor(x)) {
        fprintf(stderr, "fleetsim estimate: --%s expects a whole number from %.0f to %.0f, "
                "got '%s'\n", option, min, max, value); /* in full: 16777216, not 1.67772e+07 */
        return -1;
    }
    *out = x;
    return 0;
}

/* --engine's names into req's engines, each by its kind; the catalog's defaults where
 * none of a kind is given.  0, or -1 after saying why. */
static int resolve_engines(const catalog *cat, const char *const *names, unsigned n,
                           estimate_request *req)
{
    char known[1024], hints[512], kinds[512];
    req->engine = catalog_engine(cat, CATALOG_DEFAULT_SERVING_ENGINE);
    req->train_engine = catalog_engine(cat, CATALOG_DEFAULT_TRAINING_ENGINE);
    bool serving_given = false, training_given = false;
    for (unsigned i = 0; i < n; i++) {
        const engine_spec *e = catalog_engine(cat, names[i]);
        if (!e) {
            const char *hint = catalog_engine_hint(cat, names[i], '\'', hints, sizeof hints);
            snprintf(known, sizeof known, "%s; ", catalog_engine_names(cat, false, kinds, sizeof kinds));
            catalog_engine_names(cat, true, known + strlen(known), sizeof known - strlen(known));
            fprintf(stderr, "fleetsim estimate: --engine: unknown engine '%s' (%s%s%s)\n",
                    names[i], hint ? "did you mean " : "known: ", hint ? hint : known,
                    hint ? "?" : "");
            return -1;
        }
        bool *given = e->training ? &training_given : &serving_given;
        if (*given) {
            fprintf(stderr, "fleetsim estimate: --engine: two %s engines given ('%s' is the "
                    "second)\n", e->training ? "training" : "serving", names[i]);
            return -1;
        }
        *given = true;
        /* an engine of the half not asked for would be silently ignored */
        if ((e->training && req->halves == ESTIMATE_SERVING)
            || (!e->training && req->halves == ESTIMATE_TRAINING)) {
            fprintf(stderr, "fleetsim estimate: --engine %s is a %s engine: --%s prints the "
                    "%s half alone\n", names[i], e->training ? "training" : "serving",
                    e->training ? "serving" : "training", e->training ? "serving" : "training");
            return -1;
        }
        if (e->training)
            req->train_engine = e;
        else
            req->engine = e;
    }
    return 0;
}

/* The options of training's plan and of the halves (the rest are cli_estimate's). */
enum { O_TRAINING = 768, O_SERVING, O_TRAIN_TP, O_CP, O_EP, O_ETP, O_VPP, O_MICRO, O_ZERO,
       O_HSDP, O_RECOMPUTE, O_SCHEDULE, O_SP, O_DP_OVERLAP, O_DISPATCHER, O_EP_OVERLAP,
       O_TP_OVERLAP };

/* The options one half alone reads: given with the other half alone, they would be
 * ignored without a word, so they are refused. */
static const char *const SERVING_OPTIONS[] = {
    "batch", "prompt", "output", "kv-precision", "layout", "speculative", "acceptance",
    "draft", NULL,
};
static const char *const TRAINING_OPTIONS[] = {
    "train-tokens", "seq", "global-batch", "dualpipe", "lora", "train-tp", "pp", "cp", "ep",
    "etp", "vpp", "micro-batch", "zero", "hsdp", "recompute", "schedule", "sp", "dp-overlap",
    "dispatcher", "ep-overlap", "tp-overlap", "mtbf",
    "checkpoint-every", "checkpoint-write", "restart", "straggler", NULL,
};

/* The schedules --schedule names, in training_schedule's order after "planned". */
static const char *const SCHEDULES[] = { "planned", "1f1b", "interleaved", "zero-bubble",
                                         "dualpipe", NULL };

/* Training's plan as the options state it. */
typedef struct stated_plan {
    training_constraints c;      /* TRAINING_FREE where nothing is stated */
    training_schedule schedule;  /* --schedule's, or planned */
    bool schedule_given, zero_given, stated;
    unsigned train_tp;           /* --train-tp; 0: not given */
} stated_plan;

static bool listed(const char *const *names, const char *name)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], name))
            return true;
    return false;
}

/* One option of training's plan into p: 0, or -1 after saying why. */
static int plan_option(int opt, const char *value, stated_plan *p)
{
    static const struct { int opt; const char *name; double min, max; } counts[] = {
        { O_TRAIN_TP, "train-tp", 1, 1024 }, { O_CP, "cp", 1, 1024 }, { O_EP, "ep", 1, 1024 },
        { O_ETP, "etp", 1, 1024 }, { O_VPP, "vpp", 1, 64 },
        { O_MICRO, "micro-batch", 1, 1 << 20 }, { O_ZERO, "zero", 0, 3 },
        { O_HSDP, "hsdp", 1, 1 << 20 },
    };
    p->stated = true;
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        double x;
        if (counts[i].opt != opt)
            continue;
        if (option_count(counts[i].name, value, counts[i].min, counts[i].max, &x) != 0)
            return -1;
        unsigned n = (unsigned)x;
        switch (opt) {
        case O_TRAIN_TP: p->train_tp = n; break;
        case O_CP: p->c.cp = n; break;
        case O_EP: p->c.ep = n; break;
        case O_ETP: p->c.etp = n; break;
        case O_VPP: p->c.virtual_stages = n; break;
        case O_MICRO: p->c.micro_batch = n; break;
        case O_ZERO: p->c.zero_stage = (int)n; p->zero_given = true; break;
        case O_HSDP: p->c.shard_ranks = n; break;
        }
        return 0;
    }
    if (opt == O_SP || opt == O_DP_OVERLAP || opt == O_EP_OVERLAP || opt == O_TP_OVERLAP) {
        const char *name = opt == O_SP ? "sp" : opt == O_DP_OVERLAP ? "dp-overlap"
                           : opt == O_EP_OVERLAP ? "ep-overlap" : "tp-overlap";
        if (strcmp(value, "on") && strcmp(value, "off")) {
            fprintf(stderr, "fleetsim estimate: --%s expects on or off, got '%s'\n", name,
                    value);
            return -1;
        }
        int on = !strcmp(value, "on");
        if (opt == O_SP)
            p->c.sequence_parallel = on;
        else if (opt == O_DP_OVERLAP)
            p->c.dp_overlap = on;
        else if (opt == O_TP_OVERLAP)
            p->c.tp_overlap = on;
        else
            p->c.ep_overlap = on;
        return 0;
    }
    if (opt == O_DISPATCHER) {
        for (int t = TRAINING_DISPATCH_ALLTOALL; t <= TRAINING_DISPATCH_HYBRIDEP; t++)
            if (!strcmp(value, training_dispatcher_name((training_dispatcher)t))) {
                p->c.dispatcher = t;
                return 0;
            }
        fprintf(stderr, "fleetsim estimate: --dispatcher expects alltoall, deepep or "
                "hybridep, got '%s'\n", value);
        return -1;
    }
    if (opt == O_SCHEDULE) {
        p->schedule = TRAINING_SCHEDULE_PLANNED; /* a later --schedule replaces an earlier */
        for (int i = 1; SCHEDULES[i]; i++)
            if (!strcmp(SCHEDULES[i], value))
                p->schedule = (training_schedule)i;
        p->schedule_given = true;
        if (p->schedule != TRAINING_SCHEDULE_PLANNED)
            return 0;
        fprintf(stderr, "fleetsim estimate: --schedule expects 1f1b, interleaved, zero-bubble "
                "or dualpipe, got '%s'\n", value);
        return -1;
    }
    char *end; /* --recompute */
    double n = strtod(value, &end);
    if (!strcmp(value, "none") || !strcmp(value, "selective")) {
        p->c.recompute_layers = 0;
        p->c.selective = !strcmp(value, "selective");
    } else if (!strcmp(value, "full")) {
        p->c.recompute_layers = INT_MAX; /* more than a stage has: all of it */
        p->c.selective = 0;
    } else if (isdigit((unsigned char)value[0]) && !strpbrk(value, "xX") && !*end
               && n <= 1000000 && n == floor(n)) {
        p->c.recompute_layers = (int)n;
    } else {
        fprintf(stderr, "fleetsim estimate: --recompute expects none, selective, full or a "
                "whole number of layers a stage recomputed in full, got '%s'\n", value);
        return -1;
    }
    return 0;
}

/* The stated plan against itself, pp and --dualpipe: a combination no setup can take is
 * refused before anything runs.  0, or -1 after saying why. */
static int check_plan(stated_plan *p, unsigned pp, bool dualpipe)
{
    const char *name = SCHEDULES[p->schedule];
    unsigned vpp = p->c.virtual_stages;
    if (dualpipe && p->schedule_given && p->schedule != TRAINING_SCHEDULE_DUALPIPE) {
        fprintf(stderr, "fleetsim estimate: --dualpipe is --schedule dualpipe: not with "
                "--schedule %s\n", name);
        return -1;
    }
    if (dualpipe)
        p->schedule = TRAINING_SCHEDULE_DUALPIPE;
    bool one_chunk = p->schedule == TRAINING_SCHEDULE_1F1B
                     || p->schedule == TRAINING_SCHEDULE_ZERO_BUBBLE
                     || p->schedule == TRAINING_SCHEDULE_DUALPIPE;
    if (p->schedule == TRAINING_SCHEDULE_DUALPIPE && pp % 2) {
        fprintf(stderr, "fleetsim estimate: %s pairs the pipeline's stages: --pp must be even, "
                "got %u\n", dualpipe ? "--dualpipe" : "--schedule dualpipe", pp);
        return -1;
    }
    if (one_chunk && vpp > 1) {
        fprintf(stderr, "fleetsim estimate: %s%s runs one model chunk a stage: --vpp must be "
                "1, got %u\n", dualpipe ? "--dualpipe" : "--schedule ", dualpipe ? "" : name,
                vpp);
        return -1;
    }
    if (p->schedule == TRAINING_SCHEDULE_INTERLEAVED && vpp == 1) {
        fprintf(stderr, "fleetsim estimate: --schedule interleaved runs 2 or more model chunks "
                "a stage: --vpp must be 2 or more, got 1\n");
        return -1;
    }
    if (pp == 1 && vpp > 1) {
        fprintf(stderr, "fleetsim estimate: --vpp %u interleaves a pipeline's stages: --pp "
                "must be 2 or more, got 1\n", vpp);
        return -1;
    }
    if (pp == 1 && (p->schedule == TRAINING_SCHEDULE_INTERLEAVED
                    || p->schedule == TRAINING_SCHEDULE_ZERO_BUBBLE)) {
        fprintf(stderr, "fleetsim estimate: --schedule %s needs a pipeline of 2 or more "
                "stages: --pp must be 2 or more, got 1\n", name);
        return -1;
    }
    if (p->c.shard_ranks && p->zero_given && p->c.zero_stage != 3) {
        fprintf(stderr, "fleetsim estimate: --hsdp shards ZeRO-3's states within groups of "
                "ranks: --zero must be 3 with it, got %d\n", p->c.zero_stage);
        return -1;
    }
    if (p->c.shard_ranks)
        p->c.zero_stage = 3;
    return 0;
}

/* Which halves to answer, and training's tensor parallelism: --training makes --tp
 * training's, and each half alone refuses the other's options.  0, or -1 after saying
 * why. */
static int settle_halves(const struct option *options, const bool *seen, bool training,
                         bool serving, estimate_request *req, stated_plan *plan)
{
    if (training && serving) {
        fprintf(stderr, "fleetsim estimate: --training and --serving each ask for one half; "
                "give neither for both\n");
        return -1;
    }
    req->halves = training ? ESTIMATE_TRAINING : serving ? ESTIMATE_SERVING : ESTIMATE_BOTH;
    for (int i = 0; options[i].name; i++) {
        if (!seen[i])
            continue;
        if (serving && listed(TRAINING_OPTIONS, options[i].name)) {
            fprintf(stderr, "fleetsim estimate: --%s is training's: --serving prints the "
                    "serving half alone\n", options[i].name);
            return -1;
        }
        if (training && listed(SERVING_OPTIONS, options[i].name)) {
            fprintf(stderr, "fleetsim estimate: --%s is serving's: --training prints the "
                    "training half alone\n", options[i].name);
            return -1;
        }
    }
    if (training && req->tp) {
        if (plan->train_tp && plan->train_tp != req->tp) {
            fprintf(stderr, "fleetsim estimate: --tp %u and --train-tp %u differ; under "
                    "--training --tp is training's\n", req->tp, plan->train_tp);
            return -1;
        }
        plan->train_tp = req->tp;
        plan->stated = true;
        req->tp = 0;
    }
    plan->c.tp = plan->train_tp;
    return 0;
}

int cli_estimate(int argc, char **argv)
{
    enum { O_MODEL = 256, O_GPU, O_GPUS, O_TP, O_PP, O_PREC, O_BATCH, O_PROMPT, O_OUTPUT,
           O_TOKENS, O_SEQ, O_GLOBAL, O_CSV, O_PROFILE, O_KV, O_MODEL_FILE, O_SPEC,
           O_ACCEPT, O_DRAFT, O_LAYOUT, O_DUALPIPE, O_LORA, O_ENGINE };
    enum { O_MTBF = 512, O_EVERY, O_WRITE, O_RESTART, O_STRAGGLER }; /* goodput's */
    static const struct option options[] = {
        { "model", required_argument, NULL, O_MODEL }, { "gpu", required_argument, NULL, O_GPU },
        { "gpus", required_argument, NULL, O_GPUS }, { "tp", required_argument, NULL, O_TP },
        { "pp", required_argument, NULL, O_PP }, { "precision", required_argument, NULL, O_PREC },
        { "batch", required_argument, NULL, O_BATCH }, { "prompt", required_argument, NULL, O_PROMPT },
        { "output", required_argument, NULL, O_OUTPUT },
        { "train-tokens", required_argument, NULL, O_TOKENS },
        { "seq", required_argument, NULL, O_SEQ },
        { "global-batch", required_argument, NULL, O_GLOBAL },
        { "csv", no_argument, NULL, O_CSV }, { "help", no_argument, NULL, 'h' },
        { "profile", required_argument, NULL, O_PROFILE },
        { "kv-precision", required_argument, NULL, O_KV },
        { "model-file", required_argument, NULL, O_MODEL_FILE },
        { "speculative", required_argument, NULL, O_SPEC },
        { "acceptance", required_argument, NULL, O_ACCEPT },
        { "draft", required_argument, NULL, O_DRAFT },
        { "layout", required_argument, NULL, O_LAYOUT },
        { "dualpipe", no_argument, NULL, O_DUALPIPE },
        { "lora", no_argument, NULL, O_LORA },
        { "engine", required_argument, NULL, O_ENGINE },
        { "mtbf", required_argument, NULL, O_MTBF },
        { "checkpoint-every", required_argument, NULL, O_EVERY },
        { "checkpoint-write", required_argument, NULL, O_WRITE },
        { "restart", required_argument, NULL, O_RESTART },
        { "straggler", required_argument, NULL, O_STRAGGLER },
        { "training", no_argument, NULL, O_TRAINING },
        { "serving", no_argument, NULL, O_SERVING },
        { "train-tp", required_argument, NULL, O_TRAIN_TP },
        { "cp", required_argument, NULL, O_CP }, { "ep", required_argument, NULL, O_EP },
        { "etp", required_argument, NULL, O_ETP }, { "vpp", required_argument, NULL, O_VPP },
        { "micro-batch", required_argument, NULL, O_MICRO },
        { "zero", required_argument, NULL, O_ZERO },
        { "hsdp", required_argument, NULL, O_HSDP },
        { "recompute", required_argument, NULL, O_RECOMPUTE },
        { "schedule", required_argument, NULL, O_SCHEDULE },
        { "sp", required_argument, NULL, O_SP },
        { "dp-overlap", required_argument, NULL, O_DP_OVERLAP },
        { "dispatcher", required_argument, NULL, O_DISPATCHER },
        { "ep-overlap", required_argument, NULL, O_EP_OVERLAP },
        { "tp-overlap", required_argument, NULL, O_TP_OVERLAP },
        { NULL, 0, NULL, 0 },
    };
    bool seen[sizeof options / sizeof options[0]] = { false };
    bool training_only = false, serving_only = false;
    stated_plan plan = { .c = TRAINING_FREE };
    const char *model_name = NULL, *gpu_name = NULL, *profile_path = NULL, *model_file = NULL;
    const char *draft_name = NULL, *engine_names[2] = { NULL, NULL };
    unsigned nengines = 0;
    bool acceptance_given = false, precision_given = false;
    bool csv = false;
    estimate_request req = { .gpus = 1, .prec = PREC_FP16, .batch = 1, .prompt = 512, .output = 256 };
    double x;
    int opt, bad = 0, which = -1;
    opterr = 0;
    optind = 2;
    while (!bad && (opt = getopt_long(argc, argv, ":h", options, &which)) != -1) {
        if (opt >= O_MODEL && which >= 0)
            seen[which] = true;
        which = -1;
        switch (opt) {
        case O_MODEL: model_name = optarg; break;
        case O_GPU: gpu_name = optarg; break;
        case O_GPUS: bad = option_count("gpus", optarg, 1, 1 << 20, &x); req.gpus = (unsigned)x; break;
        case O_TP: bad = option_count("tp", optarg, 1, 1 << 20, &x); req.tp = (unsigned)x; break;
        case O_PP: bad = option_count("pp", optarg, 1, 1 << 20, &x); req.pp = (unsigned)x; break;
        case O_BATCH: bad = option_count("batch", optarg, 1, 1 << 20, &x); req.batch = (unsigned)x; break;
        case O_PROMPT: bad = option_count("prompt", optarg, 1, 1 << 24, &req.prompt); break;
        case O_OUTPUT: bad = option_count("output", optarg, 1, 1 << 24, &req.output); break;
        case O_TOKENS: bad = option_count("train-tokens", optarg, 1, 1e18, &req.train_tokens); break;
        case O_SEQ: bad = option_count("seq", optarg, 1, 1 << 24, &x); req.seq_len = (unsigned)x; break;
        case O_GLOBAL: bad = option_count("global-batch", optarg, 1, 1 << 30, &x); req.global_batch = (unsigned)x; break;
        case O_PREC:
            precision_given = true;
            if (precision_parse(optarg, &req.prec) != 0) {
                fprintf(stderr, "fleetsim estimate: --precision: unknown precision '%s' "
                        "(known: fp32, tf32, fp16, bf16, fp8, int8, int4, fp4)\n", optarg);
                bad = -1;
            }
            break;
        case O_KV:
            if (precision_parse_cache(optarg, &req.kv_prec) != 0) {
                fprintf(stderr, "fleetsim estimate: --kv-precision expects fp16, bf16, fp8 or "
                        "fp32, got '%s'\n", optarg);
                bad = -1;
            }
            req.kv_given = true;
            break;
        case O_CSV: csv = true; break;
        case O_PROFILE: profile_path = optarg; break;
        case O_MODEL_FILE: model_file = optarg; break;
        case O_SPEC: bad = option_count("speculative", optarg, 1, 64, &x); req.speculate_k = (unsigned)x; break;
        case O_ACCEPT: {
            char *end;
            req.acceptance = strtod(optarg, &end);
            acceptance_given = true;
            if (end == optarg || *end || !(req.acceptance >= 0 && req.acceptance <= 1)) {
                fprintf(stderr, "fleetsim estimate: --acceptance expects a probability in "
                        "[0, 1], got '%s'\n", optarg);
                bad = -1;
            }
            break;
        }
        case O_DRAFT: draft_name = optarg; break;
        case O_DUALPIPE: req.dualpipe = true; break;
        case O_LORA: req.lora = true; break;
        case O_TRAINING: training_only = true; break;
        case O_SERVING: serving_only = true; break;
        case O_TRAIN_TP: case O_CP: case O_EP: case O_ETP: case O_VPP: case O_MICRO:
        case O_ZERO: case O_HSDP: case O_RECOMPUTE: case O_SCHEDULE: case O_SP:
        case O_DP_OVERLAP: case O_DISPATCHER: case O_EP_OVERLAP: case O_TP_OVERLAP:
            bad = plan_option(opt, optarg, &plan);
            break;
        case O_MTBF: case O_EVERY: case O_WRITE: case O_RESTART: {
            static const char *const names[] = { "mtbf", "checkpoint-every", "checkpoint-write",
                                                 "restart" };
            double *to[] = { &req.mtbf_s, &req.checkpoint_every_s, &req.checkpoint_write_s,
                             &req.restart_s };
            bool *given[] = { &req.mtbf_given, &req.every_given, &req.write_given,
                              &req.restart_given };
            int k = opt - O_MTBF;
            *given[k] = !(opt == O_EVERY && !strcmp(optarg, "auto"));
            if (*given[k] && cli_duration_parse(optarg, to[k]) != 0) {
                fprintf(stderr, "fleetsim estimate: --%s expects a duration such as 90s, 10m "
                        "or 2h%s, got '%s'\n", names[k], opt == O_EVERY ? " (or auto)" : "",
                        optarg);
                bad = -1;
            }
            break;
        }
        case O_STRAGGLER: {
            char *end;
            req.straggler = strtod(optarg, &end);
            if (end == optarg || *end || !(req.straggler >= 0 && req.straggler <= 10)) {
                fprintf(stderr, "fleetsim estimate: --straggler expects a share from 0 to 10 "
                        "(0.05: training 5%% slower), got '%s'\n", optarg);
                bad = -1;
            }
            break;
        }
        case O_ENGINE:
            if (nengines == 2) {
                fprintf(stderr, "fleetsim estimate: --engine at most twice (a serving engine "
                        "and a training one)\n");
                bad = -1;
            } else {
                engine_names[nengines++] = optarg;
            }
            break;
        case O_LAYOUT:
            if (!strcmp(optarg, "tp"))
                req.layout = ESTIMATE_LAYOUT_TP;
            else if (!strcmp(optarg, "ep"))
                req.layout = ESTIMATE_LAYOUT_EP;
            else if (!strcmp(optarg, "attention-dp"))
                req.layout = ESTIMATE_LAYOUT_DP;
            else {
                fprintf(stderr, "fleetsim estimate: --layout expects tp, ep or attention-dp, "
                        "got '%s'\n", optarg);
                bad = -1;
            }
            break;
        case 'h': fputs(cli_estimate_usage, stdout); return 0;
        default: /* ':' or '?' */
            cli_getopt_refused("estimate", opt, argv, options);
            bad = -1;
        }
    }
    if (bad)
        return CLI_EXIT_BAD_INPUT;
    if (!bad && (acceptance_given || draft_name) && !req.speculate_k) {
        fprintf(stderr, "fleetsim estimate: --acceptance and --draft describe speculative "
                "decoding: give --speculative K too\n");
        return CLI_EXIT_BAD_INPUT;
    }
    if (settle_halves(options, seen, training_only, serving_only, &req, &plan) != 0
        || check_plan(&plan, req.pp, req.dualpipe) != 0)
        return CLI_EXIT_BAD_INPUT;
    req.train_stated = plan.stated;
    req.train_within = plan.c;
    req.schedule = plan.schedule;
    if (!bad && req.speculate_k && !acceptance_given) {
        fprintf(stderr, "fleetsim estimate: --speculative needs --acceptance (the chance a "
                "proposed token is kept, e.g. 0.7)\n");
        return CLI_EXIT_BAD_INPUT;
    }
    if (optind != argc) {
        fprintf(stderr, "fleetsim estimate: unexpected argument '%s': estimate takes options "
                "only (see fleetsim help estimate)\n", argv[optind]);
        return CLI_EXIT_BAD_INPUT;
    }
    if (!model_name || !gpu_name) {
        fprintf(stderr, "fleetsim estimate: --model and --gpu are required (see fleetsim help "
                "estimate)\n");
        return CLI_EXIT_BAD_INPUT;
    }
    catalog cat;
    char err[1024], names[1024];
    if (model_file) {
        if (catalog_load_file(model_file, &cat, err, sizeof err) != 0) {
            fprintf(stderr, "fleetsim estimate: --model-file: %s\n", err);
            return CLI_EXIT_BAD_INPUT;
        }
    } else if (catalog_load(&cat, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim: %s\n", err);
        return CLI_EXIT_RUN_FAILURE;
    }
    const model_spec *m = catalog_model(&cat, model_name);
    const device_spec *d = catalog_device(&cat, gpu_name);
    int status = 0;
    if (draft_name && !(req.draft = catalog_model(&cat, draft_name))) {
        fprintf(stderr, "fleetsim estimate: --draft: unknown model '%s' (known: %s)\n", draft_name,
                catalog_model_names(&cat, names, sizeof names));
        status = CLI_EXIT_BAD_INPUT;
    } else if (!m) {
        char hints[512];
        const char *hint = catalog_model_hint(&cat, model_name, '\'', hints, sizeof hints);
        fprintf(stderr, "fleetsim estimate: unknown model '%s'%s%s%s (known: %s)\n", model_name,
                hint ? " (did you mean " : "", hint ? hint : "", hint ? "?)" : "",
                catalog_model_names(&cat, names, sizeof names));
        status = CLI_EXIT_BAD_INPUT;
    } else if (!d) {
        char hints[512];
        const char *hint = catalog_device_hint(&cat, gpu_name, '\'', hints, sizeof hints);
        fprintf(stderr, "fleetsim estimate: unknown device '%s'%s%s%s (known: %s)\n", gpu_name,
                hint ? " (did you mean " : "", hint ? hint : "", hint ? "?)" : "",
                catalog_device_names(&cat, names, sizeof names));
        status = CLI_EXIT_BAD_INPUT;
    } else {
        device_spec calibrated = *d; /* shares the catalog's strings: not released */
        perf_profile perf = perf_default_profile(d);
        device_profile measured;
        if (profile_path) {
            if (profile_load_apply_file(profile_path, &calibrated, &perf, &measured, err,
                                        sizeof err) != 0) {
                fprintf(stderr, "fleetsim estimate: --profile: %s\n", err);
                catalog_release(&cat);
                return CLI_EXIT_BAD_INPUT;
            }
            d = &calibrated;
            req.profile = &perf;
            req.calibration = &measured;
            req.calibration_file = profile_path;
        }
        if (!precision_given)
            req.prec = m->released; /* the precision the model is released in, or fp16 */
        if (resolve_engines(&cat, engine_names, nengines, &req) != 0) {
            catalog_release(&cat);
            return CLI_EXIT_BAD_INPUT;
        }
        estimate_result r, datasheet;
        estimate_request plain = req;
        plain.profile = NULL;
        plain.calibration = NULL;
        /* -1 is a bad request, or every half asked refused (each says why); a half refused
         * beside one answered is printed in its place, and on stderr beside the CSV */
        bool answered = estimate_run(m, d, &req, &r, err, sizeof err) == 0;
        bool bad_request = !answered && r.refused != r.halves;
        if (!bad_request && profile_path
            && estimate_run(m, catalog_device(&cat, gpu_name), &plain, &datasheet, err,
                            sizeof err) != 0)
            bad_request = datasheet.refused != datasheet.halves;
        if (bad_request) {
            fprintf(stderr, "fleetsim estimate: %s\n", err);
            status = CLI_EXIT_BAD_INPUT;
        } else {
            if ((r.refused & ESTIMATE_SERVING) && (!answered || csv))
                fprintf(stderr, "fleetsim estimate: serving: %s\n", r.serving_refusal);
            if ((r.refused & ESTIMATE_TRAINING) && (!answered || csv))
                fprintf(stderr, "fleetsim estimate: training: %s\n", r.train_refusal);
            if (!answered) {
                status = CLI_EXIT_BAD_INPUT;
            } else if (csv) {
                output_estimate_csv(stdout, m, d, &req, &r);
                if (profile_path)
                    output_estimate_compare_csv(stdout, &datasheet);
            } else {
                output_estimate_text(stdout, m, d, &req, &r);
                if (profile_path)
                    output_estimate_compare_text(stdout, profile_path, &datasheet, &r);
            }
        }
    }
    catalog_release(&cat);
    return status;
}
