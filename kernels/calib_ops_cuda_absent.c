/* The CUDA operator profile of a build without nvcc (see calib_ops.h). */
#include "kernels/calib_ops.h"

int calib_ops_cuda_run(const calib_options *o, const model_spec *m, calib_samples *out,
                       calib_meta *meta, char *err, size_t err_size)
{
    (void)o, (void)m, (void)out, (void)meta;
    snprintf(err, err_size, "this fleetsim was built without CUDA (no nvcc found); rebuild "
             "with make CUDA=yes where the CUDA toolkit is installed");
    return -1;
}
