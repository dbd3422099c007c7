/* The version printed by `fleetsim version` and written into outputs.  Results depend
 * only on the scenario, the seed and this version. */
#ifndef FLEETSIM_SIM_VERSION_H
#define FLEETSIM_SIM_VERSION_H

#define FLEETSIM_VERSION "0.1.0"

#endif
