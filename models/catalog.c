/* Catalog lookups (see catalog.h). */
#include "models/catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/closest.h"

void catalog_release(catalog *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->ndevices; i++)
        device_release(&c->devices[i]);
    for (size_t i = 0; i < c->nmodels; i++)
        model_release(&c->models[i]);
    for (size_t i = 0; i < c->nengines; i++)
        engine_release(&c->engines[i]);
    free(c->devices);
    free(c->models);
    free(c->engines);
    memset(c, 0, sizeof *c);
}

int catalog_copy(catalog *to, const catalog *from)
{
    memset(to, 0, sizeof *to);
    to->devices = calloc(from->ndevices ? from->ndevices : 1, sizeof *to->devices);
    to->models = calloc(from->nmodels ? from->nmodels : 1, sizeof *to->models);
    to->engines = calloc(from->nengines ? from->nengines : 1, sizeof *to->engines);
    int status = to->devices && to->models && to->engines ? 0 : -1;
    for (size_t i = 0; status == 0 && i < from->ndevices; i++, to->ndevices++)
        status = device_copy(&to->devices[i], &from->devices[i]);
    for (size_t i = 0; status == 0 && i < from->nmodels; i++, to->nmodels++)
        status = model_copy(&to->models[i], &from->models[i]);
    for (size_t i = 0; status == 0 && i < from->nengines; i++, to->nengines++)
        status = engine_copy(&to->engines[i], &from->engines[i]);
    if (status != 0)
        catalog_release(to);
    return status;
}

const device_spec *catalog_device(const catalog *c, const char *name)
{
    for (size_t i = 0; i < c->ndevices; i++)
        if (!strcmp(c->devices[i].name, name))
            return &c->devices[i];
    return NULL;
}

const model_spec *catalog_model(const catalog *c, const char *name)
{
    for (size_t i = 0; i < c->nmodels; i++)
        if (!strcmp(c->models[i].name, name))
            return &c->models[i];
    return NULL;
}

const engine_spec *catalog_engine(const catalog *c, const char *name)
{
    for (size_t i = 0; name && i < c->nengines; i++)
        if (!strcmp(c->engines[i].name, name))
            return &c->engines[i];
    return NULL;
}

const char *catalog_engine_names(const catalog *c, bool training, char *buf, size_t size)
{
    buf[0] = '\0';
    for (size_t i = 0; i < c->nengines; i++)
        if (c->engines[i].training == training)
            snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", buf[0] ? ", " : "",
                     c->engines[i].name);
    return buf;
}

static const char *join_names(char *buf, size_t size, size_t n, const char *(*name)(const catalog *, size_t),
                              const catalog *c)
{
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? ", " : "", name(c, i));
    return buf;
}

static const char *device_name_at(const catalog *c, size_t i) { return c->devices[i].name; }
static const char *model_name_at(const catalog *c, size_t i) { return c->models[i].name; }
static const char *engine_name_at(const catalog *c, size_t i) { return c->engines[i].name; }

const char *catalog_device_names(const catalog *c, char *buf, size_t size)
{
    return join_names(buf, size, c->ndevices, device_name_at, c);
}

const char *catalog_model_names(const catalog *c, char *buf, size_t size)
{
    return join_names(buf, size, c->nmodels, model_name_at, c);
}

static const char *closest(const catalog *c, size_t n, const char *(*name)(const catalog *, size_t),
                           const char *wanted)
{
    const char **names = calloc(n + 1, sizeof *names);
    if (!names)
        return NULL;
    for (size_t i = 0; i < n; i++)
        names[i] = name(c, i);
    const char *best = closest_name(wanted, names);
    free(names);
    return best;
}

static const char *hint(const catalog *c, size_t n, const char *(*name)(const catalog *, size_t),
                        const char *wanted, char quote, char *buf, size_t size)
{
    const char **names = calloc(n + 1, sizeof *names);
    if (!names)
        return NULL;
    for (size_t i = 0; i < n; i++)
        names[i] = name(c, i);
    const char *text = closest_names_text(wanted, names, quote, buf, size);
    free(names);
    return text;
}

const char *catalog_device_hint(const catalog *c, const char *name, char quote, char *buf,
                                size_t size)
{
    return hint(c, c->ndevices, device_name_at, name, quote, buf, size);
}

const char *catalog_model_hint(const catalog *c, const char *name, char quote, char *buf,
                               size_t size)
{
    return hint(c, c->nmodels, model_name_at, name, quote, buf, size);
}

const char *catalog_engine_hint(const catalog *c, const char *name, char quote, char *buf,
                                size_t size)
{
    return hint(c, c->nengines, engine_name_at, name, quote, buf, size);
}

const char *catalog_closest_device(const catalog *c, const char *name)
{
    return closest(c, c->ndevices, device_name_at, name);
}

const char *catalog_closest_model(const catalog *c, const char *name)
{
    return closest(c, c->nmodels, model_name_at, name);
}
