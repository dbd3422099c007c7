/* The CUDA calibration of a build without nvcc (see calib_bench.h). */
#include "kernels/calib_bench.h"

int calib_cuda_run(const calib_options *o, calib_samples *out, calib_meta *meta, char *err,
                   size_t err_size)
{
    (void)o, (void)out, (void)meta;
    snprintf(err, err_size, "this fleetsim was built without CUDA (no nvcc found); rebuild "
             "with make CUDA=yes where the CUDA toolkit is installed");
    return -1;
}
