/* A decoder layer's operators on the CPU (see calib_ops.h): the projections and the
 * attention products through CBLAS, the memory passes as plain loops over fp32 rows. */
#include "kernels/calib_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/calib_blas.h"

#define COLD_BYTES (96.0 * 1024 * 1024) /* beyond the last-level cache */

/* One thread: its CPU time, so that on a shared machine the time other processes take
 * from it does not count (the operator runs in this thread: BLAS with one thread does);
 * more: elapsed time. */
static double now_s(bool thread)
{
    struct timespec t;
    clock_gettime(thread ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct ops_run {
    const calib_options *o;
    calib_blas *blas;
    calib_samples *out;
    unsigned threads, repeats;
    double target_s;       /* per repeat */
    float *pool;           /* COLD_BYTES of operands, rotated through */
    size_t pool_floats;
    char *err;
    size_t err_size;
} ops_run;

/* One timed call of an operator on operands at `offset` floats into the pool. */
typedef void (*op_fn)(ops_run *r, const void *shape, size_t offset);

/* Times op: a warm-up sizes the inner loop to the target, then r->repeats repeats.  The
 * pool's first header_floats are the op's own (activations, outputs); each call's
 * operands are the next slot of slot_floats after them, so they come from memory, not
 * from a cache that a real step's other layers would have flushed. */
static int time_op(ops_run *r, op_fn op, const void *shape, size_t header_floats,
                   size_t slot_floats, const char *kind, double m, double n, double k,
                   double bytes, double flops)
{
    size_t room = r->pool_floats > header_floats ? r->pool_floats - header_floats : 0;
    size_t slots = slot_floats ? room / slot_floats : 1;
    if (slots < 1) {
        snprintf(r->err, r->err_size, "%s %gx%gx%g: %g MB of operands is more than the %g MB "
                 "pool", kind, m, n, k, slot_floats * 4 / 1e6, COLD_BYTES / 1e6);
        return -1;
    }
    size_t next = 0;
    double t0 = now_s(r->threads == 1);
    op(r, shape, header_floats);
    double once = fmax(now_s(r->threads == 1) - t0, 1e-7);
    unsigned inner = (unsigned)fmax(1, fmin(100000, ceil(r->target_s / once)));
    for (unsigned rep = 0; rep < r->repeats; rep++) {
        double start = now_s(r->threads == 1);
        for (unsigned i = 0; i < inner; i++) {
            next = (next + 1) % slots;
            op(r, shape, header_floats + next * slot_floats);
        }
        calib_sample s = { .threads = r->threads, .m = m, .n = n, .k = k, .size_bytes = bytes,
                           .bytes = bytes, .flops = flops, .repeat = rep,
                           .seconds = (now_s(r->threads == 1) - start) / inner };
        snprintf(s.kind, sizeof s.kind, "%s", kind);
        snprintf(s.precision, sizeof s.precision, "fp32");
        if (calib_samples_add(r->out, &s) != 0) {
            snprintf(r->err, r->err_size, "out of memory for samples");
            return -1;
        }
    }
    return 0;
}

/* ---- projections ----------------------------------------------------------------------- */

typedef struct gemm_shape { int t, k, n; } gemm_shape;

/* Activations in the header (t x k, then t x n), the weights at offset. */
static void op_gemm(ops_run *r, const void *shape, size_t offset)
{
    const gemm_shape *g = shape;
    float *x = r->pool, *y = r->pool + (size_t)g->t * g->k;
    const float *w = r->pool + offset;
    calib_blas_gemm(r->blas, false, g->t, g->n, g->k, x, w, y);
}

/* ---- attention ------------------------------------------------------------------------- */

typedef struct attn_shape {
    int seqs, context, kv_heads, group, hd;
    float *scratch;        /* scores: group x context (decode), group T x T (prefill) */
} attn_shape;

/* Softmax of each of `rows` rows of `cols` (masked beyond `limit(row)` when causal). */
static void softmax_rows(float *x, int rows, int cols, int causal_period)
{
    for (int i = 0; i < rows; i++) {
        float *row = x + (size_t)i * cols;
        int valid = causal_period ? i % causal_period + 1 : cols;
        float max = row[0], sum = 0;
        for (int j = 1; j < valid; j++)
            max = row[j] > max ? row[j] : max;
        for (int j = 0; j < valid; j++)
            sum += row[j] = expf(row[j] - max);
        float inv = 1 / sum;
        for (int j = 0; j < valid; j++)
            row[j] *= inv;
        for (int j = valid; j < cols; j++)
            row[j] = 0;
    }
}

/* Per sequence and kv head: scores = Q (group x hd) K^T (hd x context), softmax, times
 * V (context x hd).  The cache sits at offset (keys stored transposed, as engines lay
 * them out for this product). */
static void op_attn_decode(ops_run *r, const void *shape, size_t offset)
{
    const attn_shape *a = shape;
    size_t head = (size_t)a->context * a->hd;
    float *q = r->pool, *o = r->pool + (size_t)a->group * a->hd;
    const float *cache = r->pool + offset;
    for (int s = 0; s < a->seqs; s++)
        for (int h = 0; h < a->kv_heads; h++) {
            const float *kt = cache + 2 * head * ((size_t)s * a->kv_heads + h), *v = kt + head;
            calib_blas_gemm(r->blas, false, a->group, a->context, a->hd, q, kt, a->scratch);
            softmax_rows(a->scratch, a->group, a->context, 0);
            calib_blas_gemm(r->blas, false, a->group, a->hd, a->context, a->scratch, v, o);
        }
}

/* One prompt of `context` tokens: per kv head, the group's queries (group T x hd) times
 * the keys (hd x T), a causal softmax, times the values (T x hd). */
static void op_attn_prefill(ops_run *r, const void *shape, size_t offset)
{
    const attn_shape *a = shape;
    int T = a->context, rows = a->group * T;
    size_t head = (size_t)T * a->hd;
    for (int h = 0; h < a->kv_heads; h++) {
        const float *q = r->pool + offset + head * (size_t)(a->group + 2) * h;
        const float *kt = q + head * a->group, *v = kt + head;
        float *o = r->pool; /* the header */
        calib_blas_gemm(r->blas, false, rows, T, a->hd, q, kt, a->scratch);
        softmax_rows(a->scratch, rows, T, T);
        calib_blas_gemm(r->blas, false, rows, a->hd, T, a->scratch, v, o);
    }
}

/* ---- memory passes ----------------------------------------------------------------------- */

typedef enum { P_NORM, P_ROPE, P_ACT, P_ADD, P_EMBED, P_RESHAPE, P_SAMPLE } pass_id;

typedef struct pass_shape {
    pass_id id;
    int rows, width;       /* tokens x hidden (rope: x head dims; act: x ffn) */
    int vocab;             /* embed: the table's rows */
    bool gated;            /* act: SiLU(gate) x up; else SiLU alone (what the bytes count) */
} pass_shape;

static void op_pass(ops_run *r, const void *shape, size_t offset)
{
    const pass_shape *p = shape;
    size_t n = (size_t)p->rows * p->width;
    float *restrict x = r->pool + offset, *restrict y = x + n, *restrict z = y + n;
    switch (p->id) {
    case P_NORM:
        for (int i = 0; i < p->rows; i++) {
            float *row = x + (size_t)i * p->width, *out = y + (size_t)i * p->width, ss = 0;
            for (int j = 0; j < p->width; j++)
                ss += row[j] * row[j];
            float inv = 1 / sqrtf(ss / p->width + 1e-5f);
            for (int j = 0; j < p->width; j++)
                out[j] = row[j] * inv * z[j % 64];
        }
        break;
    case P_ROPE: /* width = heads x head dims, rotated in pairs */
        for (size_t i = 0; i + 1 < n; i += 2) {
            float c = z[i % 64], s = z[(i + 1) % 64], a = x[i], b = x[i + 1];
            y[i] = a * c - b * s;
            y[i + 1] = a * s + b * c;
        }
        break;
    case P_ACT: /* SiLU(gate) x up: x gate, y up, z out; SiLU(x) alone when not gated */
        for (size_t i = 0; i < n; i++)
            z[i] = x[i] / (1 + expf(-x[i])) * (p->gated ? y[i] : 1);
        break;
    case P_ADD:
        for (size_t i = 0; i < n; i++)
            z[i] = x[i] + y[i];
        break;
    case P_EMBED: /* rows gathered from a table of vocab rows (the header) into x */
        for (int i = 0; i < p->rows; i++)
            memcpy(x + (size_t)i * p->width,
                   r->pool + (size_t)((i * 7919u) % (unsigned)p->vocab) * p->width,
                   sizeof(float) * p->width);
        break;
    case P_RESHAPE: /* into a cache laid out by head: a strided copy */
        for (int i = 0; i < p->rows; i++)
            for (int j = 0; j < p->width; j++)
                y[(size_t)j * p->rows + i] = x[(size_t)i * p->width + j];
        break;
    case P_SAMPLE: /* softmax over each row of logits, then the pick (greedy) */
        softmax_rows(x, p->rows, p->width, 0);
        for (int i = 0; i < p->rows; i++) {
            const float *row = x + (size_t)i * p->width;
            int best = 0;
            for (int j = 1; j < p->width; j++)
                best = row[j] > row[best] ? j : best;
            z[i] = (float)best;
        }
        break;
    }
}

/* ---- the grid ----------------------------------------------------------------------------- */

static const int TOKENS[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024 };
static const int TOKENS_QUICK[] = { 1, 4, 16, 64, 256, 1024 };
static const int BATCHES[] = { 1, 2, 4, 8, 16 };
static const int BATCHES_QUICK[] = { 1, 4, 16 };
static const int CONTEXTS[] = { 128, 256, 512, 1024, 2048 };
static const int CONTEXTS_QUICK[] = { 128, 512, 2048 };
static const int PROMPTS[] = { 64, 128, 256, 512, 1024 };
static const int PROMPTS_QUICK[] = { 64, 256, 1024 };

#define GRID(quick, a) ((quick) ? a##_QUICK : a)
#define GRID_N(quick, a) ((quick) ? sizeof a##_QUICK / sizeof(int) : sizeof a / sizeof(int))

static void progress(const ops_run *r, const char *what)
{
    if (r->o->progress)
        fprintf(r->o->progress, "calibrate: operators: %s\n", what);
}

static int gemms(ops_run *r, const model_spec *m)
{
    int hd = (int)(m->hidden / m->heads);
    int h = (int)m->hidden, q = (int)m->heads * hd, kv = (int)m->kv_heads * hd;
    int up = (m->gated ? 2 : 1) * (int)m->ffn;
    gemm_shape shapes[] = { { 0, h, q + 2 * kv }, { 0, q, h }, { 0, h, up },
                            { 0, (int)m->ffn, h }, { 0, h, (int)m->vocab } };
    const int *tokens = GRID(r->o->quick, TOKENS);
    size_t nt = GRID_N(r->o->quick, TOKENS);
    progress(r, "projections (QKV, output, up, down, LM head)");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t i = 0; i < nt; i++) {
            gemm_shape g = shapes[s];
            g.t = tokens[i];
            double K = g.k, N = g.n, T = g.t;
            if ((T * K + T * N) + K * N > r->pool_floats)
                continue; /* an LM head wider than the pool: its smaller shapes suffice */
            if (time_op(r, op_gemm, &g, (size_t)(T * K + T * N), (size_t)g.k * g.n, "op_gemm",
                        T, N, K,
                        4 * (K * N + T * K + T * N), 2 * T * K * N) != 0)
                return -1;
        }
    return 0;
}

static int attention(ops_run *r, const model_spec *m)
{
    int hd = (int)(m->hidden / m->heads), kv = (int)m->kv_heads;
    int group = (int)(m->heads / m->kv_heads);
    bool quick = r->o->quick;
    const int *b = GRID(quick, BATCHES), *c = GRID(quick, CONTEXTS), *p = GRID(quick, PROMPTS);
    size_t nb = GRID_N(quick, BATCHES), nc = GRID_N(quick, CONTEXTS), np = GRID_N(quick, PROMPTS);
    int max_prompt = p[np - 1], max_context = c[nc - 1];
    size_t scratch = (size_t)group * max_prompt * max_prompt;
    if (scratch < (size_t)group * max_context)
        scratch = (size_t)group * max_context;
    float *scores = calloc(scratch, sizeof *scores);
    if (!scores) {
        snprintf(r->err, r->err_size, "out of memory for attention scores");
        return -1;
    }
    progress(r, "decode attention over the cache");
    int status = 0;
    for (size_t i = 0; i < nb && !status; i++)
        for (size_t j = 0; j < nc && !status; j++) {
            attn_shape a = { b[i], c[j], kv, group, hd, scores };
            double cache = 2.0 * a.seqs * kv * (double)a.context * hd;
            if (cache + 4.0 * group * hd > r->pool_floats)
                continue;
            status = time_op(r, op_attn_decode, &a, 2 * (size_t)group * hd, (size_t)cache,
                             "op_attn_decode",
                             (double)a.seqs * kv, a.context, group, 4 * cache,
                             4.0 * hd * m->heads * a.seqs * a.context);
        }
    progress(r, "prefill attention");
    for (size_t i = 0; i < np && !status; i++) {
        attn_shape a = { 1, p[i], kv, group, hd, scores };
        size_t operands = (size_t)p[i] * hd * (group + 2) * kv;
        status = time_op(r, op_attn_prefill, &a, (size_t)group * p[i] * hd, operands,
                         "op_attn_prefill", p[i], m->heads,
                         hd, 4.0 * operands, 4.0 * hd * m->heads * p[i] * (double)p[i] / 2);
    }
    free(scores);
    return status;
}

static int passes(ops_run *r, const model_spec *m)
{
    int hd = (int)(m->hidden / m->heads), h = (int)m->hidden;
    int qkv = (int)(m->heads + 2 * m->kv_heads) * hd;
    const struct { pass_id id; const char *kind; int width; double bytes_per_elem; } kinds[] = {
        { P_NORM, "op_norm", h, 8 },   { P_ROPE, "op_rope", (int)(m->heads + m->kv_heads) * hd, 8 },
        { P_ACT, "op_act", (int)m->ffn, m->gated ? 12 : 8 },
        { P_ADD, "op_add", h, 12 },    { P_EMBED, "op_embed", h, 8 },
        { P_RESHAPE, "op_reshape", qkv, 8 }, { P_SAMPLE, "op_sample", (int)m->vocab, 12 },
    };
    const int *tokens = GRID(r->o->quick, TOKENS);
    size_t nt = GRID_N(r->o->quick, TOKENS);
    progress(r, "norms, rotary, activation, residual adds, embedding, copies, sampling");
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (size_t i = 0; i < nt; i++) {
            int rows = kinds[k].id == P_SAMPLE && tokens[i] > 64 ? 0 : tokens[i];
            if (!rows)
                continue; /* logits for more than 64 sequences at once: not a step's */
            pass_shape p = { kinds[k].id, rows, kinds[k].width, (int)m->vocab, m->gated };
            size_t n = (size_t)rows * p.width;
            bool embed = kinds[k].id == P_EMBED;
            size_t header = embed ? (size_t)m->vocab * p.width : 0, slot = embed ? n : 3 * n;
            if (header + slot > r->pool_floats)
                continue;
            if (time_op(r, op_pass, &p, header, slot, kinds[k].kind, rows, p.width, 0,
                        kinds[k].bytes_per_elem * (double)n, 0) != 0)
                return -1;
        }
    return 0;
}

int calib_ops_cpu_run(const calib_options *o, const model_spec *m, calib_samples *out,
                      char *err, size_t err_size)
{
    if (!m->heads || !m->kv_heads || m->hidden % m->heads || m->heads % m->kv_heads) {
        snprintf(err, err_size, "model '%s': heads must divide hidden and kv heads divide "
                 "heads", m->name ? m->name : "?");
        return -1;
    }
    ops_run r = { .o = o, .out = out, .err = err, .err_size = err_size,
                  .threads = o->threads ? o->threads : 1, .repeats = o->quick ? 3 : 5,
                  .target_s = o->quick ? 0.01 : 0.03 };
    r.pool_floats = (size_t)(COLD_BYTES / sizeof(float));
    r.pool = aligned_alloc(64, r.pool_floats * sizeof(float));
    r.blas = calib_blas_open();
    int status = -1;
    if (!r.pool || !r.blas) {
        snprintf(err, err_size, "out of memory for the operator pool (%g MB)", COLD_BYTES / 1e6);
        goto done;
    }
    for (size_t i = 0; i < r.pool_floats; i++) /* small values: no overflow in the passes */
        r.pool[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
    calib_blas_set_threads(r.blas, r.threads);
    status = gemms(&r, m) || attention(&r, m) || passes(&r, m) ? -1 : 0;
done:
    calib_blas_close(r.blas);
    free(r.pool);
    return status;
}
