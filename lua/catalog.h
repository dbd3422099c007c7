/* The device and model catalogs (lua/fleetsim/devices.lua and models.lua), read into
 * the models' C structures with the same checks and messages as scenario files. */
#ifndef FLEETSIM_LUA_CATALOG_H
#define FLEETSIM_LUA_CATALOG_H

#include <stddef.h>

#include <lua.h>

#include "models/device.h"
#include "models/llm.h"

typedef struct catalog {
    device_spec *devices; /* in name order */
    size_t ndevices;
    model_spec *models;   /* in name order */
    size_t nmodels;
} catalog;

/* Reads both catalogs from the modules built into the binary.  0, or -1 with a message. */
int catalog_load(catalog *out, char *err, size_t err_size);

/* Reads them from a state where `require "fleetsim"` works (e.g. a scenario's, whose
 * file may have changed or added entries through fs.devices / fs.models). */
int catalog_load_from(lua_State *L, catalog *out, char *err, size_t err_size);

void catalog_release(catalog *c);

/* By exact name, or NULL. */
const device_spec *catalog_device(const catalog *c, const char *name);
const model_spec *catalog_model(const catalog *c, const char *name);

/* "T4, L4, ..." (into buf) for messages. */
const char *catalog_device_names(const catalog *c, char *buf, size_t size);
const char *catalog_model_names(const catalog *c, char *buf, size_t size);

/* The closest known name to a wrong one, or NULL. */
const char *catalog_closest_device(const catalog *c, const char *name);
const char *catalog_closest_model(const catalog *c, const char *name);

#endif
