/* `fleetsim estimate`: the analytic answer for one model on one kind of device. */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/catalog.h"
#include "lua/cli.h"
#include "lua/profile_load.h"
#include "models/estimate.h"
#include "output/estimate_text.h"

const char cli_estimate_usage[] =
    "usage: fleetsim estimate --model NAME --gpu NAME [--gpus N] [--tp N] [--pp N]\n"
    "                         [--precision fp32|fp16|bf16|fp8|int8|int4|fp4] [--batch B]\n"
    "                         [--prompt P] [--output O] [--train-tokens T] [--seq S]\n"
    "                         [--global-batch G] [--dualpipe] [--lora]\n"
    "                         [--kv-precision fp16|bf16|fp8|fp32]\n"
    "                         [--layout tp|ep|attention-dp] [--profile FILE]\n"
    "                         [--model-file FILE] [--engine NAME]...\n"
    "                         [--speculative K --acceptance A [--draft MODEL]] [--csv]\n"
    "\n"
    "The analytic answer for one model on one kind of device: memory (weights, cache,\n"
    "training state), time to first token, time per output token at --batch, the best\n"
    "offline throughput on --gpus devices, and training step time, MFU, days and\n"
    "GPU-hours for --train-tokens (default 20 per parameter).  Defaults: --gpus 1,\n"
    "--precision the model's as released (fp16 unless its catalog entry says: fp8 for\n"
    "DeepSeek-V3/R1, fp4 for gpt-oss), --batch 1, --prompt 512, --output 256; --tp the\n"
    "smallest that fits.  --gpu takes any catalog device, CPUs included.\n"
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
    "--dualpipe trains on DeepSeek's DualPipe pipeline schedule (pp even, an even\n"
    "number of at least 2 pp micro-batches; twice the parameters a device) instead of\n"
    "the 1F1B or interleaved schedule the planner picks.  --lora trains low-rank\n"
    "adapters on the frozen model (no weight gradients or optimizer states for it; 4 N\n"
    "FLOPs a token).  --engine names a serving engine of the catalog (its host work\n"
    "and how much of it the GPU's step hides, its memory reservations; default\n"
    "vllm-2024, the engine the operator set measured) and, given again, a training\n"
    "engine (its bytes of state a parameter; default deepspeed): vllm, sglang,\n"
    "tensorrt-llm, tensorrt-llm-cpp; megatron, pytorch-fsdp (lua/fleetsim/engines.lua).\n"
    "--csv prints metric,value,unit rows.\n";

/* A whole number in [min, max] from an option, or -1 after saying why. */
static int option_count(const char *option, const char *value, double min, double max,
                        double *out)
{
    char *end;
    double x = strtod(value, &end);
    if (!*value || *end || !(x >= min && x <= max) || x != floor(x)) {
        fprintf(stderr, "fleetsim estimate: --%s expects a whole number from %g to %g, got "
                "'%s'\n", option, min, max, value);
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
        if (e->training)
            req->train_engine = e;
        else
            req->engine = e;
    }
    return 0;
}

int cli_estimate(int argc, char **argv)
{
    enum { O_MODEL = 256, O_GPU, O_GPUS, O_TP, O_PP, O_PREC, O_BATCH, O_PROMPT, O_OUTPUT,
           O_TOKENS, O_SEQ, O_GLOBAL, O_CSV, O_PROFILE, O_KV, O_MODEL_FILE, O_SPEC,
           O_ACCEPT, O_DRAFT, O_LAYOUT, O_DUALPIPE, O_LORA, O_ENGINE };
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
        { NULL, 0, NULL, 0 },
    };
    const char *model_name = NULL, *gpu_name = NULL, *profile_path = NULL, *model_file = NULL;
    const char *draft_name = NULL, *engine_names[2] = { NULL, NULL };
    unsigned nengines = 0;
    bool acceptance_given = false, precision_given = false;
    bool csv = false;
    estimate_request req = { .gpus = 1, .prec = PREC_FP16, .batch = 1, .prompt = 512, .output = 256 };
    double x;
    int opt, bad = 0;
    opterr = 0;
    optind = 2;
    while (!bad && (opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
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
                fprintf(stderr, "fleetsim estimate: unknown precision '%s' (known: fp32, tf32, "
                        "fp16, bf16, fp8, int8, int4, fp4)\n", optarg);
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
        case ':':
            fprintf(stderr, "fleetsim estimate: %s needs a value\n", argv[optind - 1]);
            bad = -1;
            break;
        default:
            fprintf(stderr, "fleetsim estimate: unknown option '%s' (see fleetsim help "
                    "estimate)\n", argv[optind - 1]);
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
    if (req.dualpipe && req.pp && req.pp % 2) {
        fprintf(stderr, "fleetsim estimate: --dualpipe pairs the pipeline's stages: --pp must "
                "be even, got %u\n", req.pp);
        return CLI_EXIT_BAD_INPUT;
    }
    if (!bad && req.speculate_k && !acceptance_given) {
        fprintf(stderr, "fleetsim estimate: --speculative needs --acceptance (the chance a "
                "proposed token is kept, e.g. 0.7)\n");
        return CLI_EXIT_BAD_INPUT;
    }
    if (optind != argc || !model_name || !gpu_name) {
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
        if (profile_path) {
            if (profile_load_apply_file(profile_path, &calibrated, &perf, err, sizeof err) != 0) {
                fprintf(stderr, "fleetsim estimate: --profile: %s\n", err);
                catalog_release(&cat);
                return CLI_EXIT_BAD_INPUT;
            }
            d = &calibrated;
            req.profile = &perf;
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
        if (estimate_run(m, d, &req, &r, err, sizeof err) != 0
            || (profile_path && estimate_run(m, catalog_device(&cat, gpu_name), &plain,
                                             &datasheet, err, sizeof err) != 0)) {
            fprintf(stderr, "fleetsim estimate: %s\n", err);
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
    catalog_release(&cat);
    return status;
}
