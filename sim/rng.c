/* Random streams: key derivation and xoshiro256** as a gsl_rng_type (see rng.h). */
#include "sim/rng.h"

#include <gsl/gsl_errno.h>

#include "sim/fatal.h"

/* SplitMix64 (Steele, Lea and Flood 2014): a bijective 64-bit mixer with good
 * avalanche; used to hash the key and to expand it into generator state. */
static uint64_t splitmix64_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static uint64_t mix64(uint64_t x)
{
    return splitmix64_next(&x);
}

/* FNV-1a over the name's bytes, so the key depends on the name and nothing else. */
static uint64_t hash_name(const char *name)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3u;
    return h;
}

uint64_t sim_rng_key(uint64_t seed, uint64_t replication, const char *name)
{
    return mix64(mix64(mix64(seed) ^ replication) ^ hash_name(name));
}

/* ---- xoshiro256** ---------------------------------------------------------- */

typedef struct xoshiro_state {
    uint64_t s[4];
} xoshiro_state;

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t xoshiro_next(xoshiro_state *st)
{
    uint64_t *s = st->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* GSL's set() takes an unsigned long: the full 64-bit key on LP64 systems. */
static void xoshiro_set(void *vstate, unsigned long seed)
{
    xoshiro_state *st = vstate;
    uint64_t sm = seed;
    for (int i = 0; i < 4; i++)
        st->s[i] = splitmix64_next(&sm);
}

static unsigned long xoshiro_get(void *vstate)
{
    return (unsigned long)xoshiro_next(vstate);
}

/* The top 53 bits as a double in [0, 1). */
static double xoshiro_get_double(void *vstate)
{
    return (double)(xoshiro_next(vstate) >> 11) * 0x1.0p-53;
}

_Static_assert(sizeof(unsigned long) == 8, "the generator type needs 64-bit unsigned long");

static const gsl_rng_type xoshiro_type = {
    "xoshiro256**", UINT64_MAX, 0, sizeof(xoshiro_state),
    xoshiro_set, xoshiro_get, xoshiro_get_double,
};

const gsl_rng_type *sim_rng_xoshiro256ss = &xoshiro_type;

/* ---- streams ---------------------------------------------------------------- */

void sim_gsl_quiet(void)
{
    gsl_set_error_handler_off();
}

gsl_rng *sim_rng_stream_typed(const gsl_rng_type *type, uint64_t seed,
                              uint64_t replication, const char *name)
{
    sim_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(type);
    if (!r)
        sim_out_of_memory("out of memory allocating random stream '%s'", name);
    uint64_t key = sim_rng_key(seed, replication, name);
    gsl_rng_set(r, type == sim_rng_xoshiro256ss ? key : (unsigned long)(key ^ (key >> 32)));
    return r;
}

gsl_rng *sim_rng_stream(uint64_t seed, uint64_t replication, const char *name)
{
    return sim_rng_stream_typed(sim_rng_xoshiro256ss, seed, replication, name);
}
