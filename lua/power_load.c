/* Pools' power, grid and embodied carbon (see power_load.h).
 *
 * Defaults, each from ../shared/reference/power (the fit half):
 *   - host_w 125 W per GPU: a server's draw beyond its GPUs, 1 kW per 8-GPU server, the
 *     model default of EcoLogits (host_site.csv); 0 for CPU devices, whose TDP is the
 *     socket's;
 *   - pue: the cost's pue where the pool pays for power (1.58 unless stated), else 1.58
 *     for a dedicated pool (Uptime Institute's 2023 survey average) and 1.25 for a cloud
 *     or spot pool (IDC's public-cloud industry average, Jan 2025);
 *   - grid 445 g/kWh: the world's average in 2024 (IEA, carbon.csv);
 *   - embodied 462.5 kg per GPU over 6 years: e-footprint's defaults from the BLOOM
 *     paper, 150 kg a GPU and 2,500 kg a server without GPUs, an eighth of it each
 *     (carbon.csv). */
#include "lua/power_load.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output/csv_table.h"

#define DEFAULT_PUE_DEDICATED 1.58
#define DEFAULT_PUE_CLOUD 1.25
#define DEFAULT_GRID_G_PER_KWH 445.0
#define DEFAULT_EMBODIED_KG (150.0 + 2500.0 / 8)
#define DEFAULT_LIFE_YEARS 6.0
#define BUDGET_SERVER_GPUS 8.0
#define MAX_HOURS (24 * 366 * 10)

static const char *const POWER_KINDS[] = { "power", NULL };
static const char *const POWER_KEYS[] = { "cap_w", "cap", "clock", "host_w", "pue", "grid",
                                          "embodied_kg", "life_years", "budget_kw", NULL };
static const char *const GRID_KEYS[] = { "hourly", "file", "column", NULL };

static void defaults(pool_spec *out)
{
    out->power = (power_spec){ .host_w = NAN, .pue = NAN };
    out->carbon = (carbon_spec){ .grid_g_per_kwh = DEFAULT_GRID_G_PER_KWH,
                                 .embodied_kg = DEFAULT_EMBODIED_KG,
                                 .life_years = DEFAULT_LIFE_YEARS };
}

static int check_hours(load_context *c, const fields_object *g, const char *path, size_t n)
{
    if (n == 0 || n > MAX_HOURS)
        return fields_fail(c, g->where, path, "expected 1 to %d hourly intensities (g/kWh, "
                           "one an hour from the start), got %zu", MAX_HOURS, n);
    return 0;
}

/* grid = { file = "grid.csv", column = "g_per_kwh" }: a column's rows, an hour each */
static int read_grid_file(load_context *c, const fields_object *g, const char *path,
                          carbon_spec *out)
{
    char *file = NULL, *column = NULL, *resolved = NULL;
    int status = fields_read_string(c, g, "file", true, &file)
                 || fields_read_string(c, g, "column", false, &column)
                 || fields_resolve_path(c, g, "file", file, &resolved);
    const char *name = column ? column : "g_per_kwh";
    csv_table t = { 0 };
    char why[512];
    double *values = NULL;
    if (status == 0 && csv_table_read(resolved, &t, why, sizeof why) != 0)
        status = fields_fail(c, g->where, path, "%s", why);
    long col = status == 0 ? csv_table_column(&t, name) : -1;
    if (status == 0 && col < 0)
        status = fields_fail(c, g->where, path, "%s has no column \"%s\"", file, name);
    if (status == 0)
        status = check_hours(c, g, path, t.rows);
    if (status == 0 && !(values = malloc(t.rows * sizeof *values)))
        status = fields_fail(c, g->where, path, "out of memory");
    for (size_t i = 0; status == 0 && i < t.rows; i++) {
        values[i] = csv_table_number(&t, i, col);
        if (!(values[i] >= 0 && values[i] <= 1e5))
            status = fields_fail(c, g->where, path, "%s:%zu: %s: expected g/kWh in [0, 1e5], "
                                 "got \"%s\"", file, csv_table_line(&t, i), name,
                                 csv_table_cell(&t, i, col));
    }
    if (status == 0 && carbon_spec_set_hourly(out, values, t.rows) != 0)
        status = fields_fail(c, g->where, path, "out of memory");
    else if (status != 0)
        free(values);
    csv_table_release(&t);
    free(file);
    free(column);
    free(resolved);
    return status ? -1 : 0;
}

/* grid = g/kWh | { hourly = { ... } } | { file = ..., column = ... } */
static int read_grid(load_context *c, const fields_object *p, carbon_spec *out)
{
    lua_State *L = c->L;
    int top = lua_gettop(L);
    char path[FIELD_PATH_MAX], got[96];
    snprintf(path, sizeof path, "%s.grid", p->path);
    int type = fields_object_get(c, p, "grid");
    int status = 0;
    if (type == LUA_TNUMBER) {
        lua_settop(L, top);
        status = fields_read_number(c, p, "grid", false, DEFAULT_GRID_G_PER_KWH, 0, 1e5, true,
                                    &out->grid_g_per_kwh);
    } else if (type == LUA_TTABLE) {
        fields_object g = { .index = lua_gettop(L) };
        snprintf(g.where, sizeof g.where, "%s", p->where);
        snprintf(g.path, sizeof g.path, "%s", path);
        double *hourly = NULL;
        size_t n = 0;
        status = fields_object_check_keys(c, &g, GRID_KEYS);
        int has_file = status == 0 ? fields_object_get(c, &g, "file") : LUA_TNIL;
        if (status == 0)
            lua_pop(L, 1);
        if (status == 0 && has_file != LUA_TNIL) {
            status = read_grid_file(c, &g, path, out);
        } else if (status == 0) {
            status = fields_read_list(c, &g, "hourly", false, true, &hourly, &n)
                     || check_hours(c, &g, path, n);
            for (size_t i = 0; status == 0 && i < n; i++)
                if (!(hourly[i] <= 1e5))
                    status = fields_fail(c, g.where, path, "hourly[%zu]: expected g/kWh in "
                                         "[0, 1e5], got %g", i + 1, hourly[i]);
            if (status == 0 && carbon_spec_set_hourly(out, hourly, n) != 0)
                status = fields_fail(c, g.where, path, "out of memory");
            else if (status != 0)
                free(hourly);
        }
    } else if (type != LUA_TNIL) {
        status = fields_fail(c, p->where, path, "expected g/kWh, { hourly = { ... } } or "
                             "{ file = \"grid.csv\", column = \"g_per_kwh\" }, got %s",
                             fields_describe(L, -1, got, sizeof got));
    }
    lua_settop(L, top);
    return status ? -1 : 0;
}

int power_load_convert(load_context *c, const fields_object *pool, pool_spec *out)
{
    defaults(out);
    fields_object p;
    int found = fields_object_open_field(c, pool, "power", POWER_KINDS,
                                         "fs.power { cap_w = ..., pue = ..., grid = ... }", &p);
    if (found <= 0)
        return found;
    int top = lua_gettop(c->L);
    power_setting *s = &out->power.setting;
    int status = fields_object_check_keys(c, &p, POWER_KEYS)
                 || fields_read_number(c, &p, "cap_w", false, 0, 0, 1e5, false, &s->cap_w)
                 || fields_read_number(c, &p, "cap", false, 0, 0, 1, false, &s->cap_share)
                 || fields_read_number(c, &p, "clock", false, 0, 0, 1, false, &s->clock)
                 || fields_read_number(c, &p, "host_w", false, NAN, 0, 1e5, true,
                                       &out->power.host_w)
                 || fields_read_number(c, &p, "pue", false, NAN, 1, 5, true, &out->power.pue)
                 || read_grid(c, &p, &out->carbon)
                 || fields_read_number(c, &p, "embodied_kg", false, DEFAULT_EMBODIED_KG, 0, 1e6,
                                       true, &out->carbon.embodied_kg)
                 || fields_read_number(c, &p, "life_years", false, DEFAULT_LIFE_YEARS, 0, 100,
                                       false, &out->carbon.life_years)
                 || fields_read_number(c, &p, "budget_kw", false, 0, 0, 1e9, false,
                                       &out->power.budget_kw);
    if (status == 0 && s->cap_w > 0 && s->cap_share > 0)
        status = fields_fail(c, p.where, p.path, "cap_w and cap both set a cap: give one");
    lua_settop(c->L, top - 1);
    return status ? -1 : 0;
}

int power_load_resolve(load_context *c, const fields_object *pool, pool_spec *out,
                       const device_spec *whole)
{
    power_spec *ps = &out->power;
    if (isnan(ps->pue))
        ps->pue = out->has_cost && out->cost.pays_power ? out->cost.pue
                  : out->capacity.kind == POOL_DEDICATED ? DEFAULT_PUE_DEDICATED
                                                         : DEFAULT_PUE_CLOUD;
    if (out->has_cost && out->cost.pays_power)
        out->cost.pue = ps->pue; /* one PUE: the bill's is the energy's */
    if (!whole)
        return 0;
    if (isnan(ps->host_w))
        ps->host_w = whole->is_cpu ? 0 : POWER_DEFAULT_HOST_W;
    char why[320], path[FIELD_PATH_MAX];
    if (power_model_of(whole, &ps->setting, &ps->model, why, sizeof why) != 0) {
        snprintf(path, sizeof path, "%s.power", pool->path);
        return fields_fail(c, pool->where, path, "%s", why);
    }
    return 0;
}

int power_load_apply_budget(load_context *c, const fields_object *pool, pool_spec *out)
{
    power_spec *ps = &out->power;
    if (!(ps->budget_kw > 0) || !(ps->model.tdp_w > 0))
        return 0;
    double per_gpu_w = (ps->model.cap_w + ps->host_w) * ps->pue;
    /* whole servers of 8 GPUs (HGX, DGX: the servers host_w's default is a share of) */
    double gpus = floor(ps->budget_kw * 1e3 / per_gpu_w + 1e-9);
    if (gpus >= BUDGET_SERVER_GPUS)
        gpus = floor(gpus / BUDGET_SERVER_GPUS) * BUDGET_SERVER_GPUS;
    char path[FIELD_PATH_MAX];
    snprintf(path, sizeof path, "%s.power.budget_kw", pool->path);
    if (gpus < 1)
        return fields_fail(c, pool->where, path, "%g kW powers no GPU: one needs %.6g W "
                           "((%g W + %g W host) x PUE %g)", ps->budget_kw, per_gpu_w,
                           ps->model.cap_w, ps->host_w, ps->pue);
    double units = gpus * out->units_per_gpu;
    unsigned powered = units < out->capacity.max ? (unsigned)units : out->capacity.max;
    ps->powered_units = powered;
    if (out->capacity.count > powered)
        out->capacity.count = powered;
    out->capacity.max = powered;
    if (out->min > powered)
        out->min = powered;
    return 0;
}
