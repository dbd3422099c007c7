/* Closed forms of queueing theory, for checking simulations and for quick estimates.
 * Rates are per second, times in seconds; results are NaN where the queue is unstable
 * (offered load >= number of servers) or the arguments are out of range. */
#ifndef FLEETSIM_SIM_QUEUEING_THEORY_H
#define FLEETSIM_SIM_QUEUEING_THEORY_H

/* Erlang C: probability that an arrival waits in M/M/c with offered load A = lambda/mu
 * Erlangs and c servers (A < c).  Computed through the Erlang B recursion, stable for
 * thousands of servers. */
double queueing_erlang_c(unsigned servers, double offered_load);

/* M/M/c mean wait in queue: P(wait) / (c mu - lambda). */
double queueing_mmc_wait_mean_s(unsigned servers, double arrival_rate, double service_rate);

/* M/G/1 mean wait in queue (Pollaczek-Khinchine), from the mean and variance of the
 * service time: rho tau (1 + var/tau^2) / (2 (1 - rho)). */
double queueing_mg1_wait_mean_s(double arrival_rate, double service_mean_s,
                                double service_variance_s2);

/* G/G/1 mean wait (Kingman's approximation) from the squared coefficients of variation
 * of the inter-arrival and service times. */
double queueing_kingman_wait_mean_s(double arrival_rate, double service_mean_s,
                                    double arrival_cv2, double service_cv2);

#endif
