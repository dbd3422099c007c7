/* Bytes for results that travel between processes (worker pipes, MPI messages): a
 * growing buffer to write into and a cursor to read from.
 *
 * Numbers travel as their bits in the machine's byte order (the processes are copies
 * of one program, on one machine or on machines of one kind), so a double read back is
 * the double written, NaN and signed zero included.
 */
#ifndef FLEETSIM_SIM_WIRE_H
#define FLEETSIM_SIM_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A buffer to write into; zero-initialised is empty.  Writes abort if out of memory. */
typedef struct sim_wire {
    unsigned char *data;
    size_t size, capacity;
} sim_wire;

void sim_wire_release(sim_wire *w);
void sim_wire_put_bytes(sim_wire *w, const void *bytes, size_t n);
void sim_wire_put_u64(sim_wire *w, uint64_t x);
void sim_wire_put_double(sim_wire *w, double x);
void sim_wire_put_string(sim_wire *w, const char *s); /* length, then the bytes */

/* A cursor over bytes it does not own.  A read past the end, or a string that does not
 * fit, sets `bad` and returns 0 or ""; check bad once at the end. */
typedef struct sim_wire_reader {
    const unsigned char *data;
    size_t size, at;
    bool bad;
} sim_wire_reader;

sim_wire_reader sim_wire_reader_of(const void *data, size_t size);
uint64_t sim_wire_get_u64(sim_wire_reader *r);
double sim_wire_get_double(sim_wire_reader *r);
/* Copies a string into buf (size bytes, NUL-ended); longer ones set bad. */
const char *sim_wire_get_string(sim_wire_reader *r, char *buf, size_t size);

#endif
