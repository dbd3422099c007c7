#include "sim/queueing_theory.h"

#include <math.h>

double queueing_erlang_c(unsigned servers, double offered_load)
{
    if (servers == 0 || !(offered_load >= 0) || offered_load >= servers)
        return NAN;
    double blocking = 1; /* Erlang B with 0 servers */
    for (unsigned k = 1; k <= servers; k++)
        blocking = offered_load * blocking / (k + offered_load * blocking);
    double c = servers;
    return c * blocking / (c - offered_load * (1 - blocking));
}

double queueing_mmc_wait_mean_s(unsigned servers, double arrival_rate, double service_rate)
{
    if (!(service_rate > 0))
        return NAN;
    double p_wait = queueing_erlang_c(servers, arrival_rate / service_rate);
    return p_wait / (servers * service_rate - arrival_rate);
}

double queueing_mg1_wait_mean_s(double arrival_rate, double service_mean_s,
                                double service_variance_s2)
{
    double rho = arrival_rate * service_mean_s;
    if (!(rho >= 0 && rho < 1) || !(service_mean_s > 0) || !(service_variance_s2 >= 0))
        return NAN;
    double scv = service_variance_s2 / (service_mean_s * service_mean_s);
    return rho * service_mean_s * (1 + scv) / (2 * (1 - rho));
}

double queueing_kingman_wait_mean_s(double arrival_rate, double service_mean_s,
                                    double arrival_cv2, double service_cv2)
{
    double rho = arrival_rate * service_mean_s;
    if (!(rho >= 0 && rho < 1) || !(arrival_cv2 >= 0) || !(service_cv2 >= 0))
        return NAN;
    return rho / (1 - rho) * (arrival_cv2 + service_cv2) / 2 * service_mean_s;
}
