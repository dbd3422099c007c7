/* The Lua files of the API (the .lua files in lua/fleetsim), compiled into the binary by the build
 * (lua/embed.c generates the table), so fleetsim runs from any folder with nothing
 * installed beside it. */
#ifndef FLEETSIM_LUA_MODULES_H
#define FLEETSIM_LUA_MODULES_H

#include <stddef.h>

typedef struct lua_module_source {
    const char *name;     /* "fleetsim", "fleetsim.units", ... */
    const char *chunkname; /* for error messages: "=fleetsim/units.lua" */
    const char *source;
    size_t length;
} lua_module_source;

/* Terminated by an entry with name NULL. */
extern const lua_module_source lua_module_sources[];

#endif
