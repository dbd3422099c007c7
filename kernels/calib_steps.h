/* Fitting a real engine's measured step times (fleetsim calibrate --steps): the engine-
 * level parameters of the per-operator model, so that a profile predicts the engine a
 * user runs (vLLM, SGLang, TensorRT-LLM, PyTorch) and not only the chip.
 *
 * The parameters (calib_steps_params): the engine's host work per iteration (a fixed
 * part and a part per sequence) and, per operator class, the share of the operator
 * table's achieved efficiency the engine reaches: GEMM compute, GEMM weight streaming,
 * prefill attention (its new pairs), decode attention (its cache reads and its products
 * over the cache, the table's cached-pairs efficiency), the memory passes, and a time
 * added to every kernel's floor (an eager framework's dispatch per operator).  Fitted by relative
 * nonlinear least squares of the model itself (perf_iteration with the adjusted table,
 * gsl_multifit_nlinear), on the rows not held out; the held-out rows are only predicted.
 *
 * Each share is kept within 1/CALIB_STEPS_SHARE_MAX .. CALIB_STEPS_SHARE_MAX of the
 * table's (a smooth bound: the fit works on an unbounded variable mapped into the
 * range).  The shares measured between an operator alone and the same operator inside
 * a step are 2 to 7 (docs/calibration.md: an RMSNorm of one token, 10 us alone, 60-70
 * us in a step), so 16 leaves room; beyond it the rows do not identify the class: its
 * time goes into another parameter (host work, dispatch), and an unbounded share ran to
 * 2e12 on a noisy run, a profile that no loader takes.
 */
#ifndef FLEETSIM_KERNELS_CALIB_STEPS_H
#define FLEETSIM_KERNELS_CALIB_STEPS_H

#include <stdbool.h>
#include <stddef.h>

#include "models/device.h"
#include "models/llm.h"
#include "models/perf.h"

/* One measured step (a row of the steps CSV, docs/calibration.md). */
typedef struct calib_step {
    const model_spec *model;     /* borrowed */
    const device_spec *device;   /* borrowed: the device with the profile applied */
    precision weights;
    unsigned tp;
    double batch;                /* sequences in the step */
    double prefill_tokens;       /* prompt tokens, batch - decode_tokens prompts */
    double decode_tokens;        /* sequences generating one token */
    double mean_context;         /* their mean cached context */
    double seconds;              /* measured */
    unsigned line;               /* in the file */
    bool held_out;
} calib_step;

#define CALIB_STEPS_SHARE_MAX 16.0

typedef struct calib_steps_params {
    double host_s, host_per_seq_s;   /* seconds per iteration, and per sequence */
    double gemm_compute, gemm_bandwidth, attention_prefill, attention_decode, passes;
    double kernel_s;                 /* added to every kernel's floor (dispatch) */
} calib_steps_params;

/* Every share 1, no host work or dispatch: the table as it is. */
calib_steps_params calib_steps_identity(void);

/* The profile with its operator table scaled by q (q's shares multiply the table's
 * efficiencies, q's kernel_s is added to every floor) and q's host work.  base must have an
 * operator table (perf_profile.has_operators). */
void calib_steps_adjust(const perf_profile *base, const calib_steps_params *q,
                        perf_profile *out);

/* The model's time for a step with profile p. */
double calib_step_predict(const calib_step *s, const perf_profile *p);

typedef struct calib_steps_stats {
    size_t n;
    double r2;                   /* of seconds, each row weighted 1 / measured^2 */
    double rms_rel, mean_abs_rel, worst_rel; /* of predicted / measured - 1 */
    size_t worst;                /* index into the rows */
} calib_steps_stats;

/* Statistics of p's predictions over the rows whose held_out equals held_out. */
void calib_steps_stats_of(const calib_step *rows, size_t n, const perf_profile *p,
                          bool held_out, calib_steps_stats *out);

/* Marks every k-th row held out (rows k-1, 2k-1, ...; k = round(1 / fraction)); a
 * fraction of 0 holds none out. */
void calib_steps_hold_out(calib_step *rows, size_t n, double fraction);

/* The parameters as an array, in calib_steps_params' order (host_s, host_per_seq_s,
 * gemm_compute, gemm_bandwidth, attention_prefill, attention_decode, passes, kernel_s). */
#define CALIB_STEPS_NPARAMS 8
extern const char *const calib_steps_param_names[CALIB_STEPS_NPARAMS];
void calib_steps_params_get(const calib_steps_params *q, double out[CALIB_STEPS_NPARAMS]);

/* What the rows made of a parameter.  A parameter is determined when its standard error
 * (from the fit's Jacobian and its residuals: s^2 (J'J)^-1, shares in log terms) is below
 * its value: for a share, below a factor of e either way; for a time, below the time.
 * One the rows cannot determine, or one that ran to within 10% of a share's bound (in
 * log terms: the rows would take its class's time to nothing, or to all of the step), is
 * kept at the profile's value (a share of 1, no time) and the others fitted again
 * without it, until every parameter left is determined. */
typedef enum calib_param_state {
    CALIB_PARAM_FITTED,
    CALIB_PARAM_UNDETERMINED,  /* kept at the profile's value: its error exceeded it */
    CALIB_PARAM_AT_BOUND,      /* kept at the profile's value: it ran to its bound */
} calib_param_state;

/* Leave one model out: the fit on the other models' rows, predicting the rows of the one
 * left out, each model in turn (a check of the fit on shapes it never saw). */
typedef struct calib_steps_cv {
    size_t folds;                /* models left out in turn: 0 with fewer than two models */
    size_t n;                    /* rows predicted */
    double fitted_mae;           /* mean |predicted / measured - 1| of the folds' fits */
    double profile_mae;          /* the same of the operator table alone */
} calib_steps_cv;

typedef struct calib_steps_fit {
    calib_steps_params params;
    double se[CALIB_STEPS_NPARAMS];  /* standard errors in the parameters' units; shares'
                                      * as a share times the error of its log; NAN where
                                      * kept at the profile's value */
    calib_param_state state[CALIB_STEPS_NPARAMS];
    calib_steps_stats before, train, held_out; /* before: the table alone, on the rows fitted */
    calib_steps_stats held_out_before;         /* the table alone, on the held-out rows */
    calib_steps_cv cv;
    bool accepted;   /* the fitted engine predicts the unseen better than the table alone:
                      * cross-validated where there are two models or more, else on the
                      * held-out rows.  Where not, params are the identity and the fitted
                      * profile is the table alone (the fit's findings are still reported). */
    calib_steps_params found;  /* what the fit found, accepted or not */
} calib_steps_fit;

/* The rows a fit needs after the hold-out, and the rows to measure for that many to be
 * left at hold-out fraction (calib_steps_hold_out's rule). */
#define CALIB_STEPS_MIN_ROWS (CALIB_STEPS_NPARAMS + 2)
size_t calib_steps_rows_needed(double fraction);

/* Fits q on the rows not held out, from base (which has an operator table); fitted gets
 * the adjusted profile (the table alone where the fit is not accepted).  0, or -1 with a
 * message (fewer rows than CALIB_STEPS_MIN_ROWS after the hold-out, or no convergence). */
int calib_steps_fit_rows(const calib_step *rows, size_t n, const perf_profile *base,
                         calib_steps_fit *out, perf_profile *fitted, char *err,
                         size_t err_size);

#endif
