/* The batch limits `trtllm-bench throughput` (TensorRT-LLM's benchmark) gives an engine
 * when its command line sets none: the validation rows measured with it ran at these, and
 * the serving simulation of those rows needs them (lua/validate_serving.h). */
#ifndef FLEETSIM_LUA_VALIDATE_TRTLLM_H
#define FLEETSIM_LUA_VALIDATE_TRTLLM_H

#include "models/device.h"
#include "models/llm.h"

typedef struct trtllm_limits {
    unsigned max_batch;    /* sequences an iteration */
    unsigned max_tokens;   /* tokens an iteration (prompt chunks and decoding sequences) */
    double kv_requests;    /* the requests of prompt + output its estimate of the cache holds */
} trtllm_limits;

/* The rule of TensorRT-LLM 1.0's benchmark (tensorrt_llm/bench/build/tuning.py,
 * calc_engine_setting and finetune_setting), as facts: the cache its estimate allows is
 * kv_fraction (0.95 by default) of the devices' memory less the weights (parameters at 2
 * bytes, 1 for fp8, 0.5 for fp4), at 2 x layers x max(tp, kv heads) x head size bytes a
 * token (1 a byte for an fp8 cache); the requests of prompt + output it holds, at most
 * 4,096, over pp, are the raw batch, and raw batch x (1 + prompt / output), at most 32,768,
 * the raw tokens.  Then rounded up "optimistically": the batch to a multiple of 32 (at
 * least 64) under 256, of 128 under 1,024, else of 256; the tokens to a multiple of 256 (at
 * least 2,048) under 4,096, of 512 under 8,192, else of 1,024.  Memory is the catalog's
 * (the tool reads the device's total). */
trtllm_limits trtllm_bench_limits(const model_spec *m, const device_spec *d, precision weights,
                                  precision kv, unsigned tp, unsigned pp, double prompt,
                                  double output, double kv_fraction);

#endif
