/* A speculating request's tokens by rounds (see replica_spec.h). */
#include "models/replica_spec.h"

#include <math.h>

#include "sim/fatal.h"

/* Tokens made by the first j rounds: every count goes through this one expression, so
 * that a run's tokens are the sum of its rounds' to the last bit. */
static double made_by(unsigned j, double e) { return floor((double)j * e); }

double replica_spec_fraction(unsigned rounds, double e)
{
    return (double)rounds * e - made_by(rounds, e);
}

unsigned replica_spec_tokens(unsigned from, double e, unsigned n)
{
    if (!(e >= 1))
        sim_fatal("replica_spec_tokens: a round yields at least one token, got %g", e);
    return (unsigned)(made_by(from + n, e) - made_by(from, e));
}

unsigned replica_spec_rounds_for(unsigned from, double e, unsigned tokens)
{
    if (tokens <= 1)
        return 1; /* every round makes one token at least */
    /* the estimate from the expectation, then the exact count either side of it */
    double guess = ceil((made_by(from, e) + tokens) / e) - from;
    unsigned n = guess < 1 ? 1 : (unsigned)guess;
    while (n > 1 && replica_spec_tokens(from, e, n - 1) >= tokens)
        n--;
    while (replica_spec_tokens(from, e, n) < tokens)
        n++;
    return n;
}
