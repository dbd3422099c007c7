/* The device and model catalogs (lua/fleetsim/devices.lua and models.lua), read into
 * the models' C structures with the same checks and messages as scenario files. */
#ifndef FLEETSIM_LUA_CATALOG_H
#define FLEETSIM_LUA_CATALOG_H

#include <stddef.h>

#include <lua.h>

#include "models/catalog.h"

/* Reads both catalogs from the modules built into the binary.  0, or -1 with a message. */
int catalog_load(catalog *out, char *err, size_t err_size);

/* Reads them from a state where `require "fleetsim"` works (e.g. a scenario's, whose
 * file may have changed or added entries through fs.devices / fs.models): a mistake in
 * an entry is then the scenario's, said as "<edited_in>: fs.devices.NAME.KEY: ..."
 * (NULL: the built-in modules are named). */
int catalog_load_from(lua_State *L, const char *edited_in, catalog *out, char *err,
                      size_t err_size);

/* Both catalogs after running the Lua file at path in the sandbox (`estimate
 * --model-file`): the file adds or changes entries through fs.models and fs.devices, as
 * a scenario may, and need return nothing.  Every entry is checked as the built-in ones
 * are; a mistake reads "path:LINE: models.NAME.KEY: ..." for an entry the file added (the
 * line of its assignment), "path: fs.models.NAME.KEY: ..." for one it changed.  0, or -1
 * with the message. */
int catalog_load_file(const char *path, catalog *out, char *err, size_t err_size);

#endif
