/* fs.gpu_tasks { ... } into a gpu_tasks_spec (see gpu_tasks_load.h). */
#include "lua/gpu_tasks_load.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const GPU_TASKS_KEYS[] = {
    "nodes", "tasks", "placement", "nodes_fraction", "speedup", "cpu_tasks", "unscheduled",
    NULL,
};

/* In gpu_placement order. */
static const char *const PLACEMENTS[] = {
    "first_fit", "best_fit", "fragmentation_aware", "whole_gpus", NULL,
};

/* o[key], a file relative to the scenario, into *out (NULL on failure). */
static int read_file_key(load_context *c, const fields_object *o, const char *key, char **out)
{
    char *file = NULL;
    *out = NULL;
    int status = fields_read_string(c, o, key, true, &file);
    if (status == 0)
        status = fields_resolve_path(c, o, key, file, out);
    free(file);
    return status;
}

int gpu_tasks_load_convert(load_context *c, const fields_object *w, gpu_tasks_spec *out)
{
    memset(out, 0, sizeof *out);
    out->options = gpu_tasks_options_default();
    int placement = PLACE_FIRST_FIT;
    if (fields_object_check_keys(c, w, GPU_TASKS_KEYS) != 0
        || read_file_key(c, w, "nodes", &out->nodes_path) != 0
        || read_file_key(c, w, "tasks", &out->tasks_path) != 0
        || fields_read_choice(c, w, "placement", PLACEMENTS, PLACE_FIRST_FIT, &placement) != 0
        || fields_read_number(c, w, "nodes_fraction", false, 1, 0, 1, false,
                              &out->options.nodes_fraction) != 0
        || fields_read_number(c, w, "speedup", false, 1, 0, 1e9, false, &out->options.speedup) != 0
        || fields_read_flag(c, w, "cpu_tasks", true, &out->options.cpu_tasks) != 0
        || fields_read_flag(c, w, "unscheduled", true, &out->options.unscheduled) != 0)
        return -1;
    out->options.placement = (gpu_placement)placement;
    /* the message is the reader's "file:row N: column: ..." */
    return gpu_tasks_spec_load(out, c->err, c->err_size) != 0 ? -1 : 0;
}
