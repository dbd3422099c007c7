/* Speculative decoding on a replica (replica_config's spec_k): how a request's tokens
 * advance round by round.
 *
 * Every decode step of a speculating sequence is a round: the draft proposes k tokens,
 * the target verifies k + 1 positions, and the round keeps the accepted prefix and one
 * token of the target's own, E = (1 - a^(k+1)) / (1 - a) of them in expectation for a
 * request whose tokens are each accepted with probability a (perf_speculative_tokens).
 *
 * Tokens advance by that expectation, deterministically: after j rounds a request has
 * made floor(j E) tokens by speculation, so round j makes floor((j + 1) E) - floor(j E),
 * one or more.  Why not a draw per round: a fast run of n rounds must make the tokens n
 * events of the reference mode make, and under this rule both are one expression of j
 * (the rounds' counts telescope), so the two modes agree on every token exactly and no
 * random stream is consumed differently by them.  A round's reads are priced at the
 * context its rounds have made in expectation, the whole tokens it holds and the
 * fraction j E - floor(j E) beyond them (replica_spec_fraction): so the context grows by
 * exactly E a round, one round at a time as in a fast run's closed form, and the two
 * modes agree on the costs too (under one token a sequence of reads, of a model that
 * prices the round by its expectation anyway).  What varies between requests is kept: the acceptance is
 * drawn per request (models/serving.c), as acceptance varies with the prompt.  What it
 * leaves out: a round's own spread (some keep nothing, some all k + 1), which would
 * widen TPOT's tail a little.
 */
#ifndef FLEETSIM_MODELS_REPLICA_SPEC_H
#define FLEETSIM_MODELS_REPLICA_SPEC_H

/* Tokens that rounds from..from+n-1 make at E tokens a round in expectation
 * (E >= 1). */
unsigned replica_spec_tokens(unsigned from, double tokens_per_round, unsigned n);

/* Of the tokens `rounds` rounds make in expectation (rounds x E), the fraction beyond the
 * whole ones they keep, in [0, 1). */
double replica_spec_fraction(unsigned rounds, double tokens_per_round);

/* The fewest rounds from round `from` on that make at least `tokens` tokens (1 at least). */
unsigned replica_spec_rounds_for(unsigned from, double tokens_per_round, unsigned tokens);

#endif
