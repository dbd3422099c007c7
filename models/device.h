/* Devices (GPUs and CPUs) as the performance model sees them, and numeric precisions.
 * The catalog itself is data (lua/fleetsim/devices.lua); lua/catalog.c fills these. */
#ifndef FLEETSIM_MODELS_DEVICE_H
#define FLEETSIM_MODELS_DEVICE_H

#include <stdbool.h>

typedef enum precision {
    PREC_FP32, PREC_TF32, PREC_FP16, PREC_BF16, PREC_FP8, PREC_INT8, PREC_INT4,
    PREC_FP4, /* NVFP4 / MXFP4: 4-bit floats with block scales; last, so older indices hold */
    PREC_COUNT
} precision;

/* "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4", "fp4". */
const char *precision_name(precision p);
/* 0 and *out set, or -1 for an unknown name. */
int precision_parse(const char *name, precision *out);
/* The key-value cache's default precision for weights in p: 16-bit under every weight
 * precision but fp32 (and tf32), whose models keep an fp32 cache; an fp8 cache is a
 * choice of its own (kv_precision), as engines make it (vLLM's kv_cache_dtype). */
precision precision_cache(precision weights);
/* What a checkpoint quantized to `weights` keeps its embeddings and LM head in: 16-bit
 * under the 8- and 4-bit precisions (fp16 here: the same bytes and rate as bf16), else
 * `weights` itself (models/llm.h, model_weight_bytes). */
precision precision_unquantized(precision weights);
/* A cache precision by name: "fp32", "fp16", "bf16" or "fp8"; 0, or -1 for another. */
int precision_parse_cache(const char *name, precision *out);

/* Bytes per value: 4, 4, 2, 2, 1, 1, 0.5, 0.5 (fp4's block scales not counted: one byte per
 * 16 values for NVFP4, 32 for MXFP4, under 7%). */
double precision_bytes(precision p);

typedef struct device_spec {
    char *name;
    bool is_cpu;
    double peak_flops[PREC_COUNT];  /* dense FLOP/s (OP/s for integers); 0 = not supported */
    double memory_bytes;            /* what CUDA reports (a CPU's: its DRAM): the catalog's
                                     * memory_cuda, else device_cuda_memory_bytes */
    double memory_datasheet_bytes;  /* the datasheet's "80GB" (10^9 bytes each) */
    double bandwidth_bytes_per_s;   /* memory */
    double nvlink_bytes_per_s;      /* the scale-up link (NVLink, Infinity Fabric, Gaudi's
                                     * RoCE mesh): datasheet total, both directions; 0 = none */
    unsigned scale_up_devices;      /* devices that link (NVLink domain): 8 on an HGX board,
                                     * 72 in an NVL72 rack, 2 for bridged pairs, 1 for none;
                                     * 0 = not stated (the family's node) */
    double network_bytes_per_s;     /* scale-out NIC per device, one direction; 0 = not stated */
    double network_latency_s;       /* a collective step's alpha over it; 0 = not stated */
    double network_efficiency;      /* of its line rate, a collective's; 0 = not stated */
    double pcie_bytes_per_s;        /* host link, one direction, x16 */
    double idle_w, tdp_w;
    double loaded_w;                /* drawn holding a model with no work (clocks up); 0 =
                                     * not stated (models/power.h) */
    double usd_per_hour;            /* NaN when the catalog has no price */
    double purchase_usd;            /* typical price of one device bought; NaN when unknown */
    char *price_date, *price_source;
    unsigned cores;                 /* CPUs */
} device_spec;

/* The FLOP/s the device reaches in precision p at peak: its own figure, or, when it
 * lacks p, the next wider precision it has (int4 -> int8 -> fp16 -> fp32, fp4 -> fp8 -> fp16,
 * bf16 <-> fp16, tf32 -> fp32).  Sets *used to the precision that computes. */
double device_peak_flops(const device_spec *d, precision p, precision *used);

/* Bandwidth between two devices of a tensor-parallel group, one direction: half the
 * NVLink total, or the PCIe link when there is no NVLink. */
double device_link_bytes_per_s(const device_spec *d);

/* What CUDA reports of a GPU whose datasheet says `datasheet_bytes` ("80GB" read as
 * 80 x 10^9): HBM and GDDR come in binary sizes, so 80 GiB, less what the driver keeps,
 * taken as the H100's share: CUDA reports 79.22 GiB of an 80 GB H100 (vLLM's start-up
 * line, ../shared/reference/kernels/engine_memory.csv row 1), 0.975% kept. */
double device_cuda_memory_bytes(double datasheet_bytes);

/* Frees the strings and zeroes the spec; NULL is fine. */
void device_release(device_spec *d);

/* *to = a copy of from with strings of its own (released with device_release); -1 when
 * out of memory (*to then released). */
int device_copy(device_spec *to, const device_spec *from);

#endif
