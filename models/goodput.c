/* Goodput of a training run in closed form, and the figures estimate assumes (see
 * goodput.h for the derivation). */
#include "models/goodput.h"

#include <assert.h>
#include <math.h>

/* Each default from the fit set in ../shared/reference/training (ids are its rows'):
 *
 * gpu_mtbf_s: 16,384 x 54 x 24 / 419 = 50,677 GPU-hours, from Llama 3's 419 unexpected
 *   interruptions in a 54-day snapshot of pre-training on up to 16,384 H100s (GF02;
 *   Grattafiori et al., "The Llama 3 Herd of Models", arXiv 2407.21783, sec. 3.3.4).
 *   Every cause counts (faulty GPUs and HBM, software, network, hosts), as each stopped
 *   the job.  "Up to" 16K GPUs makes it an upper bound per GPU.  Checked against the
 *   other rows: Meta's research clusters at 6.50 and 2.34 failures per 1000 node-days
 *   (GF41, GF42: 29,500 and 82,100 GPU-hours a GPU at 8 GPUs a node; Kokolis et al., HPCA
 *   2025) and BLOOM's GPU failure about weekly on 384 A100s (GF37: 64,500 GPU-hours).
 *
 * restart_s: 10 minutes, what synchronous training stalls per failure recovery at O(100K)
 *   GPUs (CK24; Salpekar et al., arXiv 2602.00277) and ByteDance's failover at 10,000 GPUs
 *   ("more than 10 minutes", CK22; Wu et al., SOSP 2025), in the lower half of Kokolis'
 *   5-20 minutes (CK20).  Its parts agree: detection and diagnosis under 10 minutes
 *   (MegaScale, GF27; Jiang et al., NSDI 2024), communication groups under 30 s at
 *   >10,000 GPUs once optimised (CK06), a 405B checkpoint loaded in 129.49 s on 8,960
 *   GPUs (CK16; Wan et al., ByteCheckpoint, NSDI 2025).
 *
 * write_bytes_per_s_per_gpu: 2 TB/s / 16,384 = 122 MB/s, Llama 3's checkpoint storage
 *   (sustained, CK01) over its GPUs; a synchronous write pauses the job for the whole of
 *   it.  Checked against BLOOM's 2.3 TB saved in 40 s by 384 GPUs, training blocked
 *   (CK08: 150 MB/s a GPU).  Asynchronous checkpointing blocks for the copy to host memory
 *   only (0.59 s at 8,960 GPUs, CK14; 0.78 s at 1,856, CK12): --checkpoint-write says so.
 *
 * weight_bytes, optimizer_bytes: 2 + 12 bytes a parameter (16-bit weights, fp32 master
 *   weights and Adam's two moments; the training engines' default, models/engine.h);
 *   gradients are not saved.  BLOOM's 2.3 TB for 176B parameters is 13.1 (CK08), OPT's
 *   1.6 TB for 175B 9.1 (CK07).
 */
const goodput_defaults GOODPUT_DEFAULTS = {
    .gpu_mtbf_s = 16384.0 * 54 * 86400 / 419,
    .mtbf_source = "Llama 3: 419 unexpected interruptions in 54 days on 16,384 H100s",
    .restart_s = 600,
    .restart_source = "synchronous recovery at 10K-100K GPUs: ByteRobust, FT-HSDP; "
                      "Kokolis et al. 5-20 min",
    .write_bytes_per_s_per_gpu = 2e12 / 16384,
    .write_source = "Llama 3's storage, 2 TB/s for 16,384 GPUs",
    .weight_bytes = 2,
    .optimizer_bytes = 12,
};

goodput_result goodput_expect(const goodput_inputs *in)
{
    assert(in->gpus >= 1 && "a job of no GPUs");
    assert(in->work_s >= 0 && isfinite(in->work_s) && in->mtbf_s >= 0 && in->every_s >= 0
           && in->write_s >= 0 && in->restart_s >= 0 && in->straggler >= 0
           && "goodput inputs out of range");
    goodput_result r = { 0 };
    double work = in->work_s * (1 + in->straggler);
    r.straggler_s = work - in->work_s;
    /* the stages as training_segment_s counts them: n saved, the last L unsaved */
    double n = 0, last = work;
    if (work > 0 && in->every_s > 0) {
        n = ceil(work / in->every_s) - 1;
        last = work - n * in->every_s;
    }
    r.checkpoints = n;
    r.checkpoint_s = n * in->write_s;
    double lambda = in->mtbf_s > 0 ? in->gpus / in->mtbf_s : 0;
    r.job_mtbf_s = lambda > 0 ? 1 / lambda : INFINITY;
    if (lambda == 0) {
        r.wall_s = work + r.checkpoint_s;
    } else {
        /* expm1 keeps the small-rate case exact: n (e^{x} - 1) with x ~ 1e-6 */
        r.wall_s = exp(lambda * in->restart_s) / lambda
                   * ((n > 0 ? n * expm1(lambda * (in->every_s + in->write_s)) : 0)
                      + expm1(lambda * last));
    }
    r.gpu_hours = in->gpus * r.wall_s / 3600;
    r.goodput = r.wall_s > 0 ? in->work_s / r.wall_s : 1;
    if (!isfinite(r.wall_s)) { /* e^{lambda b} overflowed: every share but the loss is 0 */
        r.wall_s = r.gpu_hours = r.failures = r.lost_s = INFINITY;
        r.restart_s = in->restart_s > 0 ? INFINITY : 0;
        r.goodput = 0;
        return r;
    }
    r.failures = lambda * r.wall_s;
    r.restart_s = -r.wall_s * expm1(-lambda * in->restart_s);
    /* rounding may leave -1e-12 where nothing is lost */
    r.lost_s = fmax(0, r.wall_s - work - r.checkpoint_s - r.restart_s);
    return r;
}

double goodput_young_daly_s(double write_s, double job_mtbf_s)
{
    if (!(job_mtbf_s > 0) || !isfinite(job_mtbf_s))
        return 0;
    return sqrt(2 * write_s * job_mtbf_s);
}
