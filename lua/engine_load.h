/* A workload's `engine` in a scenario file: the name of a catalog engine
 * (lua/fleetsim/engines.lua, or one the scenario added to fs.engines) of the kind the
 * workload runs, serving for fs.inference and training for fs.training:
 *
 *   engine = "sglang"
 *
 * Absent: the catalog's default (CATALOG_DEFAULT_SERVING_ENGINE, ..._TRAINING_ENGINE),
 * which every output that depends on it names. */
#ifndef FLEETSIM_LUA_ENGINE_LOAD_H
#define FLEETSIM_LUA_ENGINE_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "lua/fields.h"
#include "models/catalog.h"

/* w.engine into *index (catalog->engines), the default when absent (*defaulted then
 * true).  A name the catalog lacks, or one of the other kind, is the scenario's mistake
 * (with the names it could have meant).  0, or -1 with the message in the context. */
int engine_load(load_context *c, const fields_object *w, const catalog *cat, bool training,
                size_t *index, bool *defaulted);

#endif
