/* The device, model and engine catalogs as C values: what the performance model and the
 * serving model look devices, models and engines up in.  lua/catalog.h fills one from the
 * catalogs' Lua files. */
#ifndef FLEETSIM_MODELS_CATALOG_H
#define FLEETSIM_MODELS_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "models/device.h"
#include "models/engine.h"
#include "models/llm.h"

/* The engines a workload runs when it names none. */
#define CATALOG_DEFAULT_SERVING_ENGINE "vllm"
#define CATALOG_DEFAULT_TRAINING_ENGINE "deepspeed"

typedef struct catalog {
    device_spec *devices; /* in name order */
    size_t ndevices;
    model_spec *models;   /* in name order */
    size_t nmodels;
    engine_spec *engines; /* in name order */
    size_t nengines;
} catalog;

/* Frees every entry.  NULL-safe; a zeroed catalog is empty. */
void catalog_release(catalog *c);

/* *to = a copy of from, every entry its own; -1 when out of memory (*to then empty). */
int catalog_copy(catalog *to, const catalog *from);

/* By exact name, or NULL. */
const device_spec *catalog_device(const catalog *c, const char *name);
const model_spec *catalog_model(const catalog *c, const char *name);
const engine_spec *catalog_engine(const catalog *c, const char *name);

/* "T4, L4, ..." (into buf) for messages. */
const char *catalog_device_names(const catalog *c, char *buf, size_t size);
const char *catalog_model_names(const catalog *c, char *buf, size_t size);
/* The engines of one kind (training or serving), the same way. */
const char *catalog_engine_names(const catalog *c, bool training, char *buf, size_t size);

/* The closest known name to a wrong one, or NULL. */
const char *catalog_closest_device(const catalog *c, const char *name);
const char *catalog_closest_model(const catalog *c, const char *name);
/* The names a misspelt one most likely meant, quoted and joined ("\"H100-PCIe\" or
 * \"H100-SXM\"": closest_names_text), in buf; NULL when none. */
const char *catalog_device_hint(const catalog *c, const char *name, char quote, char *buf,
                                size_t size);
const char *catalog_model_hint(const catalog *c, const char *name, char quote, char *buf,
                               size_t size);
const char *catalog_engine_hint(const catalog *c, const char *name, char quote, char *buf,
                                size_t size);

#endif
