#include "sim/wire.h"

#include <string.h>
#include <stdlib.h>

#include "sim/array.h"

void sim_wire_release(sim_wire *w)
{
    free(w->data);
    *w = (sim_wire){ 0 };
}

void sim_wire_put_bytes(sim_wire *w, const void *bytes, size_t n)
{
    if (w->capacity - w->size < n)
        w->data = sim_array_grow(w->data, &w->capacity, w->size + n, 1, "packed results");
    if (n)
        memcpy(w->data + w->size, bytes, n);
    w->size += n;
}

void sim_wire_put_u64(sim_wire *w, uint64_t x) { sim_wire_put_bytes(w, &x, sizeof x); }
void sim_wire_put_double(sim_wire *w, double x) { sim_wire_put_bytes(w, &x, sizeof x); }

void sim_wire_put_string(sim_wire *w, const char *s)
{
    size_t n = strlen(s);
    sim_wire_put_u64(w, n);
    sim_wire_put_bytes(w, s, n);
}

sim_wire_reader sim_wire_reader_of(const void *data, size_t size)
{
    return (sim_wire_reader){ data, size, 0, false };
}

static bool take(sim_wire_reader *r, void *out, size_t n)
{
    if (r->bad || r->size - r->at < n) {
        r->bad = true;
        return false;
    }
    memcpy(out, r->data + r->at, n);
    r->at += n;
    return true;
}

uint64_t sim_wire_get_u64(sim_wire_reader *r)
{
    uint64_t x = 0;
    return take(r, &x, sizeof x) ? x : 0;
}

double sim_wire_get_double(sim_wire_reader *r)
{
    double x = 0;
    return take(r, &x, sizeof x) ? x : 0;
}

const char *sim_wire_get_string(sim_wire_reader *r, char *buf, size_t size)
{
    uint64_t n = sim_wire_get_u64(r);
    buf[0] = '\0';
    if (r->bad || n >= size || !take(r, buf, (size_t)n)) {
        r->bad = true;
        buf[0] = '\0';
        return buf;
    }
    buf[n] = '\0';
    return buf;
}
