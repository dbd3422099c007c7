#include "output/jobs.h"

#include <stdlib.h>

#include "output/atomic_file.h"
#include "output/csv_write.h"

struct jobs_writer {
    atomic_file *file;
};

jobs_writer *jobs_open(const char *dir, char *err, size_t err_size)
{
    jobs_writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->file = atomic_file_open(dir, "jobs.csv", err, err_size);
    if (!w->file) {
        free(w);
        return NULL;
    }
    fputs("replication,workload,name,arrival_s,start_s,end_s,wait_s,gpus,gpu_hours,work_s,"
          "goodput,mfu_effective,restarts,preemptions,failures,completed\n",
          atomic_file_stream(w->file));
    return w;
}

void jobs_write(void *writer, const job_record *r)
{
    FILE *out = atomic_file_stream(((jobs_writer *)writer)->file);
    csv_write_number(out, (double)r->replication, true);
    csv_write_text(out, r->workload, false);
    csv_write_text(out, r->name, false);
    csv_write_number(out, r->arrival_s, false);
    csv_write_number(out, r->start_s, false);
    csv_write_number(out, r->end_s, false);
    csv_write_number(out, r->wait_s, false);
    csv_write_number(out, r->gpus, false);
    csv_write_number(out, r->gpu_hours, false);
    csv_write_number(out, r->work_s, false);
    csv_write_number(out, r->goodput, false);
    csv_write_number(out, r->mfu_effective, false);
    csv_write_number(out, r->restarts, false);
    csv_write_number(out, r->preemptions, false);
    csv_write_number(out, r->failures, false);
    csv_write_number(out, r->completed, false);
    fputc('\n', out);
}

int jobs_commit(jobs_writer *w, char *err, size_t err_size)
{
    int status = atomic_file_commit(w->file, err, err_size);
    free(w);
    return status;
}

void jobs_abort(jobs_writer *w)
{
    if (!w)
        return;
    atomic_file_abort(w->file);
    free(w);
}
