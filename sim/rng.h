/* Random streams: one independent, reproducible GSL generator per named random source.
 *
 * A stream is keyed by (scenario seed, replication number, source name), e.g.
 * (1, 0, "workload.chat.arrivals").  The key is a 64-bit hash of the three, so adding a
 * source never shifts the numbers another source draws, and replication r of every sweep
 * point draws the same numbers (common random numbers).
 *
 * Generator.  The streams are gsl_rng objects, so every gsl_ran_* distribution applies.
 * The default type is xoshiro256** (Blackman and Vigna, 2018), registered with GSL as a
 * gsl_rng_type: its 256-bit state is filled from the 64-bit key by SplitMix64, so
 * distinct keys give statistically independent streams.  GSL's own types take a 32-bit
 * seed, which across thousands of (replication, source) pairs risks two sources drawing
 * identical numbers (a birthday collision); they remain available through
 * sim_rng_stream_typed for comparison, seeded with the key folded to 32 bits.
 * The integer arithmetic is fixed-width: the same key gives the same numbers on any
 * machine.
 */
#ifndef FLEETSIM_SIM_RNG_H
#define FLEETSIM_SIM_RNG_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

/* xoshiro256** as a GSL generator type: 64-bit outputs, uniform doubles with 53 bits. */
extern const gsl_rng_type *sim_rng_xoshiro256ss;

/* The 64-bit key of a stream.  name must not be NULL. */
uint64_t sim_rng_key(uint64_t seed, uint64_t replication, const char *name);

/* A new stream of the default type for (seed, replication, name); the caller releases it
 * with gsl_rng_free.  Switches GSL's abort-on-error handler off.  Aborts if out of
 * memory. */
gsl_rng *sim_rng_stream(uint64_t seed, uint64_t replication, const char *name);

/* The same with a GSL generator type of the caller's choice (seeded from the key folded
 * to 32 bits when the type is not the default). */
gsl_rng *sim_rng_stream_typed(const gsl_rng_type *type, uint64_t seed,
                              uint64_t replication, const char *name);

/* Makes GSL report errors through return codes instead of aborting.  Idempotent; called
 * by every sim_ function that uses GSL, exposed for programs that call GSL directly. */
void sim_gsl_quiet(void);

#endif
