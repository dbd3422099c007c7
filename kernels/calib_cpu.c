/* The CPU's micro-kernels (see calib_bench.h): STREAM-like copy and triad with POSIX
 * threads, and GEMM through CBLAS. */
#include "kernels/calib_bench.h"

#include <math.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernels/calib_blas.h"
#include "kernels/calib_fit.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- memory bandwidth ---------------------------------------------------------------- */

typedef enum { STREAM_COPY, STREAM_TRIAD } stream_kernel;

typedef struct stream_shared {
    double *a, *b, *c;
    size_t n;               /* elements per array */
    unsigned threads, passes, repeats; /* repeats: the warm-up is repeat 0 */
    stream_kernel kernel;
    pthread_mutex_t gate;   /* held by the main thread until every thread exists */
    bool cancelled;         /* a thread could not be created: the others leave */
    pthread_barrier_t barrier;
    double *rep_s;          /* per pass, written by thread 0 */
} stream_shared;

typedef struct stream_worker {
    stream_shared *s;
    unsigned id;
} stream_worker;

/* Out of line, with restrict: the compiler neither merges repeated passes nor fears
 * aliasing (which would keep it from vectorising). */
__attribute__((noinline)) static void stream_copy(double *restrict c, const double *restrict a,
                                                  size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++)
        c[i] = a[i];
}

__attribute__((noinline)) static void stream_triad(double *restrict a, const double *restrict b,
                                                   const double *restrict c, double scalar,
                                                   size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++)
        a[i] = b[i] + scalar * c[i];
}

static void *stream_thread(void *arg)
{
    stream_worker *w = arg;
    stream_shared *s = w->s;
    size_t lo = s->n * w->id / s->threads, hi = s->n * (w->id + 1) / s->threads;
    pthread_mutex_lock(&s->gate);
    bool cancelled = s->cancelled;
    pthread_mutex_unlock(&s->gate);
    if (cancelled)
        return NULL;
    for (size_t i = lo; i < hi; i++) { /* first touch: pages near the thread using them */
        s->a[i] = 1.0;
        s->b[i] = 2.0;
        s->c[i] = 0.5;
    }
    for (unsigned r = 0; r < s->repeats; r++) {
        pthread_barrier_wait(&s->barrier);
        double start = w->id == 0 ? now_s() : 0;
        for (unsigned p = 0; p < s->passes; p++) {
            if (s->kernel == STREAM_COPY)
                stream_copy(s->c, s->a, lo, hi);
            else
                stream_triad(s->a, s->b, s->c, 0.5, lo, hi);
        }
        pthread_barrier_wait(&s->barrier);
        if (w->id == 0)
            s->rep_s[r] = (now_s() - start) / s->passes;
    }
    return NULL;
}

/* One series: a kernel on arrays of `bytes` each with `threads` threads. */
static int stream_series(stream_kernel kernel, size_t bytes, unsigned threads, unsigned repeats,
                         double target_bytes, calib_samples *out, double *median_rate,
                         char *err, size_t err_size)
{
    stream_shared s = { .n = bytes / sizeof(double), .threads = threads,
                        .repeats = repeats + 1, .kernel = kernel };
    double moved = (kernel == STREAM_COPY ? 2.0 : 3.0) * (double)(s.n * sizeof(double));
    s.passes = (unsigned)fmax(1, fmin(1e6, ceil(target_bytes / moved)));
    s.a = aligned_alloc(64, s.n * sizeof(double));
    s.b = aligned_alloc(64, s.n * sizeof(double));
    s.c = aligned_alloc(64, s.n * sizeof(double));
    s.rep_s = calloc(s.repeats, sizeof *s.rep_s);
    pthread_t *tid = calloc(threads, sizeof *tid);
    stream_worker *workers = calloc(threads, sizeof *workers);
    int status = -1;
    unsigned started = 0;
    if (!s.a || !s.b || !s.c || !s.rep_s || !tid || !workers) {
        snprintf(err, err_size, "out of memory for 3 arrays of %zu bytes", bytes);
        goto done;
    }
    if (pthread_barrier_init(&s.barrier, NULL, threads) != 0) {
        snprintf(err, err_size, "pthread_barrier_init failed");
        goto done;
    }
    pthread_mutex_init(&s.gate, NULL);
    pthread_mutex_lock(&s.gate);
    for (unsigned t = 1; t < threads; t++, started++) {
        workers[t] = (stream_worker){ &s, t };
        if (pthread_create(&tid[t], NULL, stream_thread, &workers[t]) != 0)
            break;
    }
    s.cancelled = started + 1 != threads;
    pthread_mutex_unlock(&s.gate);
    if (s.cancelled) {
        for (unsigned t = 1; t <= started; t++)
            pthread_join(tid[t], NULL);
        pthread_barrier_destroy(&s.barrier);
        pthread_mutex_destroy(&s.gate);
        snprintf(err, err_size, "pthread_create failed after %u threads", started + 1);
        goto done;
    }
    workers[0] = (stream_worker){ &s, 0 };
    stream_thread(&workers[0]);
    for (unsigned t = 1; t < threads; t++)
        pthread_join(tid[t], NULL);
    pthread_barrier_destroy(&s.barrier);
    pthread_mutex_destroy(&s.gate);
    double rates[64];
    for (unsigned r = 1; r < s.repeats; r++) {
        calib_sample x = { .threads = threads, .size_bytes = (double)(s.n * sizeof(double)),
                           .bytes = moved, .repeat = r - 1, .seconds = s.rep_s[r] };
        snprintf(x.kind, sizeof x.kind, "%s", kernel == STREAM_COPY ? "copy" : "triad");
        snprintf(x.precision, sizeof x.precision, "fp64");
        if (calib_samples_add(out, &x) != 0) {
            snprintf(err, err_size, "out of memory");
            goto done;
        }
        if (r - 1 < 64)
            rates[r - 1] = moved / s.rep_s[r];
    }
    *median_rate = calib_median(rates, repeats < 64 ? repeats : 64, NULL);
    status = 0;
done:
    free(s.a);
    free(s.b);
    free(s.c);
    free(s.rep_s);
    free(tid);
    free(workers);
    return status;
}

/* 1, then every count to 8, then doubling, ending at cores (quick: 1 and cores). */
static unsigned next_threads(unsigned t, unsigned cores, bool quick)
{
    if (t >= cores)
        return cores + 1;
    unsigned next = quick ? cores : (t < 8 ? t + 1 : 2 * t);
    return next < cores ? next : cores;
}

static int stream_all(const calib_options *o, unsigned cores, calib_samples *out, char *err,
                      size_t err_size)
{
    /* bytes per array: 16 KB (L1) to 256 MB (DRAM) */
    static const size_t quick_sizes[] = { 16 << 10, 256 << 10, 4 << 20, 64 << 20, 256 << 20 };
    static const size_t full_sizes[] = { 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20,
                                         16 << 20, 64 << 20, 256 << 20 };
    const size_t *sizes = o->quick ? quick_sizes : full_sizes;
    size_t nsizes = o->quick ? 5 : 8;
    unsigned repeats = o->quick ? 5 : 11;
    double target = o->quick ? 256e6 : 1e9; /* bytes moved per repeat: tens of ms */
    for (int kernel = STREAM_COPY; kernel <= STREAM_TRIAD; kernel++) {
        for (unsigned t = 1; t <= cores; t = next_threads(t, cores, o->quick)) {
            for (size_t i = 0; i < nsizes; i++) {
                double rate;
                if (stream_series((stream_kernel)kernel, sizes[i], t, repeats, target, out,
                                  &rate, err, err_size) != 0)
                    return -1;
                if (o->progress)
                    fprintf(o->progress, "  %-5s %9zu KB  %2u thread%s  %8.1f GB/s\n",
                            kernel == STREAM_COPY ? "copy" : "triad", sizes[i] >> 10, t,
                            t == 1 ? " " : "s", rate / 1e9);
            }
        }
    }
    return 0;
}

/* ---- GEMM ---------------------------------------------------------------------------- */

typedef struct gemm_shape {
    int m, n, k;
} gemm_shape;

/* Times one shape: a warm-up call sizes the inner loop to about target_s a repeat. */
static int gemm_series(calib_blas *blas, bool fp64, gemm_shape s, unsigned threads,
                       unsigned repeats, double target_s, const char *kind, calib_samples *out,
                       double *median_rate, char *err, size_t err_size)
{
    size_t elem = fp64 ? sizeof(double) : sizeof(float);
    size_t na = (size_t)s.m * s.k, nb = (size_t)s.k * s.n, nc = (size_t)s.m * s.n;
    unsigned char *a = malloc(na * elem), *b = malloc(nb * elem), *c = malloc(nc * elem);
    if (!a || !b || !c) {
        free(a), free(b), free(c);
        snprintf(err, err_size, "out of memory for a %dx%dx%d GEMM", s.m, s.n, s.k);
        return -1;
    }
    /* small varied values: no denormals, no zeros a BLAS might skip */
    for (size_t i = 0; i < na; i++) {
        if (fp64) ((double *)a)[i] = 0.01 * (double)(i % 17);
        else ((float *)a)[i] = 0.01f * (float)(i % 17);
    }
    for (size_t i = 0; i < nb; i++) {
        if (fp64) ((double *)b)[i] = 0.02 * (double)(i % 13);
        else ((float *)b)[i] = 0.02f * (float)(i % 13);
    }
    double start = now_s();
    calib_blas_gemm(blas, fp64, s.m, s.n, s.k, a, b, c);
    double once = fmax(now_s() - start, 1e-7);
    unsigned inner = (unsigned)fmax(1, fmin(100000, ceil(target_s / once)));
    double flops = 2.0 * s.m * s.n * s.k, rates[64];
    int status = 0;
    for (unsigned r = 0; r < repeats && status == 0; r++) {
        start = now_s();
        for (unsigned i = 0; i < inner; i++)
            calib_blas_gemm(blas, fp64, s.m, s.n, s.k, a, b, c);
        calib_sample x = { .threads = threads, .m = s.m, .n = s.n, .k = s.k, .flops = flops,
                           .bytes = (double)((na + nb + nc) * elem), .repeat = r,
                           .seconds = (now_s() - start) / inner };
        snprintf(x.kind, sizeof x.kind, "%s", kind);
        snprintf(x.precision, sizeof x.precision, "%s", fp64 ? "fp64" : "fp32");
        if (r < 64)
            rates[r] = flops / x.seconds;
        if (calib_samples_add(out, &x) != 0) {
            snprintf(err, err_size, "out of memory");
            status = -1;
        }
    }
    *median_rate = calib_median(rates, repeats < 64 ? repeats : 64, NULL);
    free(a);
    free(b);
    free(c);
    return status;
}

static int gemm_all(const calib_options *o, unsigned cores, calib_blas *blas,
                    calib_samples *out, char *err, size_t err_size)
{
    /* decode-like: m tokens against a k x n weight matrix; then squares */
    static const int quick_m[] = { 1, 4, 16, 64, 256 }, full_m[] = { 1, 2, 4, 8, 16, 32, 64,
                                                                     128, 256 };
    static const int quick_sq[] = { 128, 256, 512, 1024 }, full_sq[] = { 128, 256, 512, 1024,
                                                                         2048 };
    int wide = o->quick ? 1024 : 2048;
    unsigned repeats = o->quick ? 5 : 11;
    double target_s = o->quick ? 0.01 : 0.05;
    calib_blas_set_threads(blas, cores);
    for (int fp64 = 0; fp64 <= 1; fp64++) {
        size_t nm = o->quick ? 5 : 9, nsq = o->quick ? 4 : 5;
        for (size_t i = 0; i < nm + nsq; i++) {
            gemm_shape s = i < nm ? (gemm_shape){ (o->quick ? quick_m : full_m)[i], wide, wide }
                                  : (gemm_shape){ (o->quick ? quick_sq : full_sq)[i - nm],
                                                  (o->quick ? quick_sq : full_sq)[i - nm],
                                                  (o->quick ? quick_sq : full_sq)[i - nm] };
            double rate;
            if (gemm_series(blas, fp64, s, cores, repeats, target_s, "gemm", out, &rate, err,
                            err_size) != 0)
                return -1;
            if (o->progress)
                fprintf(o->progress, "  gemm  %s  %5d x %5d x %5d  %8.1f GFLOP/s\n",
                        fp64 ? "fp64" : "fp32", s.m, s.n, s.k, rate / 1e9);
        }
    }
    /* a call's fixed cost: the CPU's counterpart of a kernel launch */
    double rate;
    return gemm_series(blas, false, (gemm_shape){ 1, 1, 1 }, 1, repeats, target_s / 10, "launch",
                       out, &rate, err, err_size);
}

/* ---- the whole run ------------------------------------------------------------------- */

static void cpu_name(char *out, size_t size)
{
    snprintf(out, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            const char *v = strchr(line, ':') + 1;
            v += *v == ' ';
            snprintf(out, size, "%s", v);
            out[strcspn(out, "\n")] = '\0';
            break;
        }
    }
    fclose(f);
}

double calib_cpu_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

double calib_cpu_cache_bytes(void)
{
#if defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l3 > 0 ? (double)l3 : l2 > 0 ? (double)l2 : 0;
#else
    return 0;
#endif
}

int calib_cpu_run(const calib_options *o, calib_samples *out, calib_meta *meta, char *err,
                  size_t err_size)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned cores = online > 0 ? (unsigned)online : 1;
    if (o->threads && o->threads < cores)
        cores = o->threads;
    if (cores > 256)
        cores = 256;
    cpu_name(meta->device, sizeof meta->device);
    snprintf(meta->kind, sizeof meta->kind, "cpu");
    meta->memory_bytes = calib_cpu_memory_bytes();
    meta->cache_bytes = calib_cpu_cache_bytes();
    meta->threads = cores;
    meta->quick = o->quick;
    calib_blas *blas = calib_blas_open();
    if (!blas) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    snprintf(meta->blas, sizeof meta->blas, "%s", calib_blas_name(blas));
    if (o->progress)
        fprintf(o->progress, "calibrating %s, %u thread%s, BLAS: %s\n", meta->device, cores,
                cores == 1 ? "" : "s", meta->blas);
    int status = stream_all(o, cores, out, err, err_size);
    if (status == 0)
        status = gemm_all(o, cores, blas, out, err, err_size);
    calib_blas_close(blas);
    return status;
}
