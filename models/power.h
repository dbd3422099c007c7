/* What a device draws by what it does, and what a power cap or a locked clock costs.
 *
 * A device holding a model draws its loaded-idle power (weights resident, clocks up, no
 * work: above its no-context idle), and on top of it, while it works, a share of the
 * range up to its TDP set by what bounds the work: operators bound by compute draw
 * nearly all of it, operators bound by memory bandwidth about half, collectives as
 * memory-bound work, kernel floors (launch gaps) and the host's work nothing more:
 *
 *     P = loaded_w + (tdp_w - loaded_w) x share[phase] x g(clock[phase])
 *
 * A phase's dynamic power follows its clock f as g(f) = f x V(f)^2 (dynamic CMOS
 * power), the voltage falling with the clock, V(f) = f^beta, down to a floor V0 below
 * which only the clock falls.  A power cap is a limit the device holds: each phase whose
 * full-clock draw exceeds it runs at the clock where it draws the cap, so compute-bound
 * work (prefill, training's products) slows first and memory-bound work (decode) only
 * under a deep cap.  A locked clock slows compute-bound work alone (the memory's clock
 * is its own).  Every constant and its source: power.c.
 *
 * Energy is priced per phase-second, so a run's energy follows in closed form from the
 * device-seconds its replicas or jobs spent in each phase (perf_phases), with no
 * sampling. */
#ifndef FLEETSIM_MODELS_POWER_H
#define FLEETSIM_MODELS_POWER_H

#include <stddef.h>

#include "models/device.h"
#include "models/perf.h"

/* What a pool asks of its devices: a cap and a clock (0: none). */
typedef struct power_setting {
    double cap_w;      /* watts the device may draw; 0: its TDP */
    double cap_share;  /* or the cap as a share of the TDP, (0, 1]; 0: none */
    double clock;      /* the compute clock as a share of its maximum, (0, 1]; 0: full */
} power_setting;

/* A device under a setting. */
typedef struct power_model {
    double idle_w;          /* no context (a device held without a model) */
    double loaded_w;        /* weights resident, no work */
    double tdp_w;
    double cap_w;           /* the limit in force (the TDP without a cap) */
    /* watts above loaded_w while each phase runs, at its clock */
    double compute_w, memory_w, comm_w, launch_w;
    /* the share of full speed each kind of work keeps under the setting */
    double compute_speed, memory_speed;
} power_model;

/* A server's draw beyond its GPUs, a GPU's share: 1 kW per 8-GPU server, the model
 * default of EcoLogits (../shared/reference/power/host_site.csv). */
#define POWER_DEFAULT_HOST_W (1000.0 / 8)

/* A pool's power as a scenario states it: its devices' setting, what its servers draw
 * beyond the GPUs, its site's PUE, and the model that follows for its device. */
typedef struct power_spec {
    power_setting setting;
    double host_w;       /* per GPU held: its share of the server's CPUs, memory, NICs,
                          * fans and power supplies, drawn whether it works or not */
    double pue;          /* facility energy over IT energy (>= 1) */
    double budget_kw;    /* the site's limit on the pool's provisioned power; 0: none */
    unsigned powered_units; /* under a budget: the units it powers (0: no budget) */
    power_model model;   /* the pool's device under the setting (power_model_of) */
} power_spec;

/* The share of the dynamic range (TDP less loaded idle) a device draws at full clock
 * while work of this bound runs (power.c has the sources): compute, memory and
 * communication; 0 for kernel floors and host work. */
double power_share(perf_bound phase);
/* Loaded-idle power as a share of the TDP where the catalog states none. */
extern const double POWER_LOADED_SHARE;

/* A device's loaded-idle watts: the catalog's loaded_w, else POWER_LOADED_SHARE of its
 * TDP (never below its idle_w). */
double power_loaded_w(const device_spec *d);

/* g(f) = f V(f)^2 of a clock share f in (0, 1]: dynamic power relative to full clock. */
double power_dynamic_share(double clock);
/* Its inverse: the clock at which dynamic power is `share` of full-clock's, (0, 1]. */
double power_clock_for(double share);

/* The model of device d under s.  0, or -1 with a message (a cap at or under the loaded
 * idle power, above the TDP, a clock outside (0, 1], a device without a TDP). */
int power_model_of(const device_spec *d, const power_setting *s, power_model *out, char *err,
                   size_t err_size);

/* Joules above loaded-idle of work w (device-seconds by phase, at the setting's speed). */
double power_work_joules(const power_model *m, const perf_phases *w);

/* A step's mean draw: loaded_w plus its work's joules over its time. */
double power_step_w(const power_model *m, const perf_time *t);

#endif
