/* Autoscaling a fleet of replicas: what a policy sees, and the built-in policy as a
 * pure function of that view (the horizontal autoscaler's target tracking), so that it
 * is testable without an engine.  models/serving.c calls it every interval. */
#ifndef FLEETSIM_MODELS_AUTOSCALE_H
#define FLEETSIM_MODELS_AUTOSCALE_H

#include <stdbool.h>
#include <stddef.h>

/* How an elastic pool follows its load: fs.autoscaler { metric, target, interval,
 * cooldown, scale_in_delay } or a scenario function. */
typedef enum autoscale_metric {
    AUTOSCALE_UTILIZATION,   /* busy fraction of the replicas over the last interval */
    AUTOSCALE_QUEUE,         /* requests waiting or running per replica, now */
    AUTOSCALE_KV_CACHE,      /* share of the key-value cache committed, over the interval */
} autoscale_metric;

/* What a scaling policy sees at each evaluation. */
typedef struct autoscale_view {
    double now_s;
    unsigned active, provisioning, draining; /* replicas */
    unsigned min, max;
    double utilization;      /* busy fraction of the replicas over the last interval */
    double kv_cache;         /* cache committed over the last interval */
    double outstanding;      /* requests waiting or running, pending ones included */
    unsigned pending;        /* requests no replica could take yet */
    unsigned spilled;        /* requests that would have come to this (overflow) pool
                                since the last evaluation, had it had a replica */
} autoscale_view;

/* A custom policy: the number of replicas wanted, or -1 with a message in err. */
typedef int (*scale_fn)(void *context, const autoscale_view *view, char *err, size_t err_size);

typedef struct autoscaler_spec {
    bool enabled;
    autoscale_metric metric;
    double target;           /* of the metric */
    double interval_s;       /* between evaluations */
    double cooldown_s;       /* after a scale-out, before the next one */
    double scale_in_delay_s; /* the metric must stay low this long before a scale-in */
    scale_fn custom;         /* or NULL; its context lives in scenario.runtime */
    void *custom_context;
} autoscaler_spec;

/* What the built-in policy remembers between evaluations (NaN: nothing). */
typedef struct autoscale_memory {
    double last_scale_out_s;   /* when the target last rose: the cooldown runs from it */
    double low_since_s;        /* since when the metric has asked for fewer replicas */
} autoscale_memory;

autoscale_memory autoscale_memory_start(void);

/* n replicas within the view's min and max (NaN or below min: min). */
unsigned autoscale_clamp(const autoscale_view *v, double n);

/* The replicas that would bring the metric to its target, unclamped: busy share x
 * active / target (likewise the cache share), or outstanding requests / target for the
 * queue metric.  With no replica active: 1 when anything waits or is being provisioned
 * (or more, as many as are being provisioned), else 0. */
double autoscale_desired(const autoscaler_spec *a, const autoscale_view *v);

/* The new target given the current one: the desired count within the bounds, raised
 * only once the cooldown since the last rise has passed, lowered only once the metric
 * has stayed low for the scale-in delay; else the current target. */
unsigned autoscale_decide(const autoscaler_spec *a, const autoscale_view *v, unsigned target,
                          autoscale_memory *memory);

#endif
