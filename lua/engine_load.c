/* A workload's engine (see engine_load.h). */
#include "lua/engine_load.h"

#include <stdio.h>
#include <stdlib.h>

int engine_load(load_context *c, const fields_object *w, const catalog *cat, bool training,
                size_t *index, bool *defaulted)
{
    char *name = NULL, path[FIELD_PATH_MAX];
    if (fields_read_string(c, w, "engine", false, &name) != 0)
        return -1;
    const char *wanted = name ? name
                              : training ? CATALOG_DEFAULT_TRAINING_ENGINE
                                         : CATALOG_DEFAULT_SERVING_ENGINE;
    const char *kind = training ? "training" : "serving";
    *defaulted = !name;
    const engine_spec *e = catalog_engine(cat, wanted);
    snprintf(path, sizeof path, "%s.engine", w->path);
    char names[1024], hints[512];
    int status = 0;
    if (!e) {
        const char *hint = name ? catalog_engine_hint(cat, name, '"', hints, sizeof hints) : NULL;
        status = hint ? fields_fail(c, w->where, path, "unknown engine \"%s\" (did you mean %s?)",
                                    wanted, hint)
                      : fields_fail(c, w->where, path, "unknown %s engine \"%s\" (known: %s)",
                                    kind, wanted,
                                    catalog_engine_names(cat, training, names, sizeof names));
    } else if (e->training != training) {
        status = fields_fail(c, w->where, path, "\"%s\" is a %s engine; a %s workload runs one "
                             "of: %s", wanted, e->training ? "training" : "serving",
                             training ? "training" : "inference",
                             catalog_engine_names(cat, training, names, sizeof names));
    } else {
        *index = (size_t)(e - cat->engines);
    }
    free(name);
    return status;
}
