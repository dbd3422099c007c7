/* The `parallelism` cell of a validation row as data (models/validate_plan.h).  One row
 * of `keys` per key: its name and how its value is read; tokens are matched whole, never
 * by substring, so "VPP=2 PP=8" is eight stages of two chunks each. */
#include "models/validate_plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef enum value_kind { VALUE_COUNT, VALUE_ZERO, VALUE_WORD } value_kind;

static const char *const schedules[] = { "1f1b", "interleaved", "zero-bubble", "dualpipe", NULL };
static const char *const recomputes[] = { "none", "selective", "full", NULL };
static const char *const switches[] = { "off", "on", NULL }; /* in that order: 0, 1 */
enum { SCHEDULE_1F1B, SCHEDULE_INTERLEAVED, SCHEDULE_ZERO_BUBBLE, SCHEDULE_DUALPIPE };
enum { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL };

static const struct {
    const char *name;
    value_kind kind;
    const char *const *words; /* VALUE_WORD's choices */
} keys[PLAN_KEYS] = {
    [PLAN_TP] = { "TP", VALUE_COUNT, NULL },
    [PLAN_PP] = { "PP", VALUE_COUNT, NULL },
    [PLAN_CP] = { "CP", VALUE_COUNT, NULL },
    [PLAN_EP] = { "EP", VALUE_COUNT, NULL },
    [PLAN_ETP] = { "ETP", VALUE_COUNT, NULL },
    [PLAN_VPP] = { "VPP", VALUE_COUNT, NULL },
    [PLAN_DP] = { "DP", VALUE_COUNT, NULL },
    [PLAN_MBS] = { "MBS", VALUE_COUNT, NULL },
    [PLAN_GA] = { "GA", VALUE_COUNT, NULL },
    [PLAN_ZERO] = { "ZERO", VALUE_ZERO, NULL },
    [PLAN_HSDP] = { "HSDP", VALUE_COUNT, NULL },
    [PLAN_SCHEDULE] = { "SCHEDULE", VALUE_WORD, schedules },
    [PLAN_RECOMPUTE] = { "RECOMPUTE", VALUE_WORD, recomputes },
    [PLAN_RECOMPUTE_LAYERS] = { "RECOMPUTE_LAYERS", VALUE_COUNT, NULL },
    [PLAN_REPLICAS] = { "REPLICAS", VALUE_COUNT, NULL },
    [PLAN_SP] = { "SP", VALUE_WORD, switches },
    [PLAN_DP_OVERLAP] = { "DP_OVERLAP", VALUE_WORD, switches },
    [PLAN_DISPATCHER] = { "DISPATCHER", VALUE_WORD, training_dispatcher_names },
    [PLAN_EP_OVERLAP] = { "EP_OVERLAP", VALUE_WORD, switches },
    [PLAN_TP_OVERLAP] = { "TP_OVERLAP", VALUE_WORD, switches },
};

const char *validate_plan_key_name(validate_plan_key key)
{
    return key < PLAN_KEYS ? keys[key].name : NULL;
}

bool validate_plan_has(const validate_plan *p, validate_plan_key key)
{
    return key < PLAN_KEYS && (p->stated >> key & 1u);
}

static bool separator(char c) { return c == ' ' || c == ',' || c == '\t'; }

/* A value of n characters as a whole number from lo to hi; false if it is not one. */
static bool whole(const char *v, size_t n, unsigned lo, unsigned hi, unsigned *out)
{
    if (n == 0 || n > 9) /* nine digits stay within unsigned */
        return false;
    unsigned x = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return false;
        x = x * 10 + (unsigned)(v[i] - '0');
    }
    *out = x;
    return x >= lo && x <= hi;
}

/* Reads one token's value into *value (a count, a stage or a word's index). */
static int read_value(validate_plan_key k, const char *v, size_t n, const char *token,
                      size_t token_len, unsigned *value, char *err, size_t err_size)
{
    if (keys[k].kind == VALUE_COUNT && whole(v, n, 1, VALIDATE_PLAN_MAX, value))
        return 0;
    if (keys[k].kind == VALUE_ZERO && whole(v, n, 0, 3, value))
        return 0;
    if (keys[k].kind == VALUE_WORD)
        for (unsigned i = 0; keys[k].words[i]; i++)
            if (strlen(keys[k].words[i]) == n && !memcmp(keys[k].words[i], v, n)) {
                *value = i;
                return 0;
            }
    char expected[96];
    if (keys[k].kind == VALUE_COUNT)
        snprintf(expected, sizeof expected, "a whole number from 1 to %u", VALIDATE_PLAN_MAX);
    else if (keys[k].kind == VALUE_ZERO)
        snprintf(expected, sizeof expected, "0, 1, 2 or 3");
    else {
        size_t used = 0;
        expected[0] = 0;
        for (unsigned i = 0; keys[k].words[i]; i++)
            used += (size_t)snprintf(expected + used, sizeof expected - used, "%s%s",
                                     i == 0 ? "" : keys[k].words[i + 1] ? ", " : " or ",
                                     keys[k].words[i]);
    }
    snprintf(err, err_size, "bad value '%.*s' for %s in '%.*s' (expected %s)", (int)n, v,
             keys[k].name, (int)token_len, token, expected);
    return -1;
}

/* What a token's value means for the plan. */
static void apply(validate_plan *p, validate_plan_key k, unsigned value)
{
    training_constraints *c = &p->training;
    switch (k) {
    case PLAN_TP: c->tp = value; break;
    case PLAN_PP: c->pp = value; break;
    case PLAN_CP: c->cp = value; break;
    case PLAN_EP: c->ep = value; break;
    case PLAN_ETP: c->etp = value; break;
    case PLAN_VPP: c->virtual_stages = value; break;
    case PLAN_DP: c->dp = value; break;
    case PLAN_MBS: c->micro_batch = value; break;
    case PLAN_GA: p->accumulation = value; break;
    case PLAN_ZERO: c->zero_stage = (int)value; break;
    case PLAN_HSDP: c->shard_ranks = value; break;
    case PLAN_SCHEDULE:
        c->dualpipe = value == SCHEDULE_DUALPIPE;
        c->zero_bubble = value == SCHEDULE_ZERO_BUBBLE;
        break;
    case PLAN_RECOMPUTE:
        /* Megatron's granularities: full layers, or the attention core alone */
        c->selective = value == RECOMPUTE_SELECTIVE;
        if (value != RECOMPUTE_FULL)
            c->recompute_layers = 0;
        break;
    case PLAN_RECOMPUTE_LAYERS: c->recompute_layers = (int)value; break;
    case PLAN_REPLICAS: p->replicas = value; break;
    case PLAN_SP: c->sequence_parallel = (int)value; break;
    case PLAN_DP_OVERLAP: c->dp_overlap = (int)value; break;
    case PLAN_DISPATCHER: c->dispatcher = TRAINING_DISPATCH_ALLTOALL + (int)value; break;
    case PLAN_EP_OVERLAP: c->ep_overlap = (int)value; break;
    case PLAN_TP_OVERLAP: c->tp_overlap = (int)value; break;
    case PLAN_KEYS: break;
    }
}

/* The keys' values against each other, once all are read. */
static int settle(validate_plan *p, unsigned schedule, unsigned recompute, char *err,
                  size_t err_size)
{
    training_constraints *c = &p->training;
    bool has_schedule = validate_plan_has(p, PLAN_SCHEDULE);
    bool interleaved = validate_plan_has(p, PLAN_VPP) && c->virtual_stages > 1;
    if (has_schedule && schedule == SCHEDULE_INTERLEAVED && !interleaved) {
        snprintf(err, err_size, "SCHEDULE=interleaved needs VPP of 2 or more");
        return -1;
    }
    if (has_schedule && schedule != SCHEDULE_INTERLEAVED && interleaved) {
        snprintf(err, err_size, "VPP=%u is the interleaved schedule, not SCHEDULE=%s",
                 c->virtual_stages, schedules[schedule]);
        return -1;
    }
    if (has_schedule && schedule == SCHEDULE_1F1B)
        c->virtual_stages = 1; /* one chunk a stage */
    bool has_recompute = validate_plan_has(p, PLAN_RECOMPUTE);
    if (validate_plan_has(p, PLAN_RECOMPUTE_LAYERS)
        && (!has_recompute || recompute != RECOMPUTE_FULL)) {
        snprintf(err, err_size, "RECOMPUTE_LAYERS=%d goes with RECOMPUTE=full",
                 c->recompute_layers);
        return -1;
    }
    p->recompute_all = has_recompute && recompute == RECOMPUTE_FULL
                       && !validate_plan_has(p, PLAN_RECOMPUTE_LAYERS);
    if (validate_plan_has(p, PLAN_HSDP)) {
        if (validate_plan_has(p, PLAN_ZERO) && c->zero_stage != 3) {
            snprintf(err, err_size, "HSDP=%u shards ZeRO-3's states, not ZERO=%d",
                     c->shard_ranks, c->zero_stage);
            return -1;
        }
        c->zero_stage = 3;
    }
    return 0;
}

int validate_plan_parse(const char *text, validate_plan *out, char *err, size_t err_size)
{
    *out = (validate_plan){ .training = TRAINING_FREE };
    unsigned schedule = 0, recompute = 0;
    for (const char *s = text ? text : ""; *s;) {
        while (separator(*s))
            s++;
        if (!*s)
            break;
        const char *token = s;
        while (*s && !separator(*s))
            s++;
        size_t len = (size_t)(s - token);
        const char *eq = memchr(token, '=', len);
        if (!eq || eq == token) {
            snprintf(err, err_size, "malformed token '%.*s' (expected KEY=value)", (int)len,
                     token);
            return -1;
        }
        size_t klen = (size_t)(eq - token);
        validate_plan_key k = 0;
        while (k < PLAN_KEYS && (strlen(keys[k].name) != klen || memcmp(keys[k].name, token, klen)))
            k++;
        if (k == PLAN_KEYS) {
            char known[192];
            size_t used = 0;
            for (validate_plan_key i = 0; i < PLAN_KEYS; i++)
                used += (size_t)snprintf(known + used, sizeof known - used, "%s%s",
                                         i ? ", " : "", keys[i].name);
            snprintf(err, err_size, "unknown key '%.*s' in '%.*s' (known: %s)", (int)klen, token,
                     (int)len, token, known);
            return -1;
        }
        if (validate_plan_has(out, k)) {
            snprintf(err, err_size, "repeated key '%s' in '%.*s'", keys[k].name, (int)len, token);
            return -1;
        }
        unsigned value;
        if (read_value(k, eq + 1, len - klen - 1, token, len, &value, err, err_size) != 0)
            return -1;
        out->stated |= 1u << k;
        if (k == PLAN_SCHEDULE)
            schedule = value;
        if (k == PLAN_RECOMPUTE)
            recompute = value;
        apply(out, k, value);
    }
    return settle(out, schedule, recompute, err, err_size);
}

training_constraints validate_plan_training(const validate_plan *p, unsigned layers)
{
    training_constraints c = p->training;
    if (p->recompute_all)
        c.recompute_layers = (int)layers;
    return c;
}

bool validate_plan_check(const validate_plan *p, double gpus, double global_batch,
                         training_constraints *c, char *why, size_t why_size)
{
    double cp = c->cp ? c->cp : 1, tp = c->tp ? c->tp : 1, pp = c->pp ? c->pp : 1;
    bool layout = validate_plan_has(p, PLAN_TP) && validate_plan_has(p, PLAN_PP);
    double dp = validate_plan_has(p, PLAN_DP) ? p->training.dp : 0;
    if (dp && layout && gpus != dp * tp * pp * cp) {
        snprintf(why, why_size, "DP=%g but %g GPUs over TP=%g x PP=%g x CP=%g are %g "
                 "data-parallel ranks", dp, gpus, tp, pp, cp, gpus / (tp * pp * cp));
        return false;
    }
    if (dp && fmod(gpus, dp * tp * pp * cp) != 0) {
        snprintf(why, why_size, "DP=%g x TP x PP x CP as stated does not divide %g GPUs", dp,
                 gpus);
        return false;
    }
    if (!dp && layout && fmod(gpus, tp * pp * cp) == 0)
        dp = gpus / (tp * pp * cp); /* the ranks the stated layout leaves */
    if (!(global_batch > 0))
        return true;
    double mbs = validate_plan_has(p, PLAN_MBS) ? c->micro_batch : 0;
    double ga = p->accumulation;
    if (ga && dp && mbs && dp * mbs * ga != global_batch) {
        snprintf(why, why_size, "GA=%g but a batch of %g sequences over %g data-parallel ranks "
                 "of MBS=%g is %g micro-batches a rank", ga, global_batch, dp, mbs,
                 global_batch / (dp * mbs));
        return false;
    }
    if (validate_plan_has(p, PLAN_DP) && mbs && !ga && fmod(global_batch, dp * mbs) != 0) {
        snprintf(why, why_size, "a batch of %g sequences is no whole number of MBS=%g "
                 "micro-batches on DP=%g ranks", global_batch, mbs, dp);
        return false;
    }
    if (ga && (dp ? !mbs : mbs)) {
        /* the third of DP x MBS x GA = batch, derived so the planner keeps to it */
        double known = ga * (dp ? dp : mbs), third = global_batch / known;
        if (third != floor(third) || third > VALIDATE_PLAN_MAX) {
            snprintf(why, why_size, "GA=%g: a batch of %g sequences is no whole number of "
                     "%g-sequence shares (%s)", ga, global_batch, known,
                     dp ? "data-parallel ranks x GA" : "MBS x GA");
            return false;
        }
        if (dp)
            c->micro_batch = (unsigned)third;
        else
            c->dp = (unsigned)third;
    } else if (ga && !dp && !mbs) {
        snprintf(why, why_size, "GA=%g without DP, MBS or TP and PP: nothing to check it by",
                 ga);
        return false;
    }
    return true;
}
