/* CBLAS loaded at run time (see calib_blas.h). */
#include "kernels/calib_blas.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_cblas.h>

typedef __typeof__(cblas_sgemm) sgemm_fn;
typedef __typeof__(cblas_dgemm) dgemm_fn;
typedef void set_threads_fn(int);
typedef char *text_fn(void);

struct calib_blas {
    void *handle; /* NULL: GSL's reference CBLAS */
    sgemm_fn *sgemm;
    dgemm_fn *dgemm;
    set_threads_fn *set_threads;
    char name[256];
};

/* dlsym's object pointer as a function pointer (POSIX guarantees the conversion). */
static void *symbol(void *handle, const char *name)
{
    return handle ? dlsym(handle, name) : NULL;
}

calib_blas *calib_blas_open(void)
{
    calib_blas *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    const char *names[] = { "libopenblas.so.0", "libopenblas.so" };
    const char *why = "";
    for (size_t i = 0; i < 2 && !b->handle; i++) {
        b->handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!b->handle && i == 0) {
            const char *e = dlerror();
            why = e ? e : "dlopen failed";
        }
    }
    if (b->handle) {
        *(void **)&b->sgemm = symbol(b->handle, "cblas_sgemm");
        *(void **)&b->dgemm = symbol(b->handle, "cblas_dgemm");
        *(void **)&b->set_threads = symbol(b->handle, "openblas_set_num_threads");
        text_fn *config, *core;
        *(void **)&config = symbol(b->handle, "openblas_get_config");
        *(void **)&core = symbol(b->handle, "openblas_get_corename");
        if (!b->sgemm || !b->dgemm) {
            dlclose(b->handle);
            b->handle = NULL;
            why = "libopenblas has no cblas_sgemm/cblas_dgemm";
        } else {
            snprintf(b->name, sizeof b->name, "%s (core %s)", config ? config() : "OpenBLAS",
                     core ? core() : "unknown");
        }
    }
    if (!b->handle) {
        b->sgemm = cblas_sgemm;
        b->dgemm = cblas_dgemm;
        b->set_threads = NULL;
        snprintf(b->name, sizeof b->name, "GSL reference CBLAS (OpenBLAS not loaded: %s; "
                 "apt-get install libopenblas0)", why);
    }
    return b;
}

void calib_blas_close(calib_blas *b)
{
    if (!b)
        return;
    if (b->handle)
        dlclose(b->handle);
    free(b);
}

const char *calib_blas_name(const calib_blas *b) { return b->name; }

bool calib_blas_is_tuned(const calib_blas *b) { return b->handle != NULL; }

void calib_blas_set_threads(calib_blas *b, unsigned threads)
{
    if (b->set_threads)
        b->set_threads((int)threads);
}

void calib_blas_gemm(const calib_blas *b, bool fp64, int m, int n, int k, const void *a,
                     const void *bm, void *c)
{
    if (fp64)
        b->dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, bm, n, 0.0, c, n);
    else
        b->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, bm, n, 0.0f, c, n);
}
