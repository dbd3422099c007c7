#include "output/records.h"

#include <stdlib.h>

#include "output/atomic_file.h"
#include "output/csv_write.h"

struct records_writer {
    atomic_file *file;
};

records_writer *records_open(const char *dir, char *err, size_t err_size)
{
    records_writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->file = atomic_file_open(dir, "requests.csv", err, err_size);
    if (!w->file) {
        free(w);
        return NULL;
    }
    fputs("replication,workload,id,arrival_s,admitted_s,first_token_s,finish_s,prompt_tokens,"
          "output_tokens,ttft_s,tpot_s,e2e_s,rtt_s,dropped\n", atomic_file_stream(w->file));
    return w;
}

void records_write(void *writer, const request_record *r)
{
    FILE *out = atomic_file_stream(((records_writer *)writer)->file);
    csv_write_number(out, (double)r->replication, true);
    csv_write_text(out, r->workload, false);
    csv_write_number(out, (double)r->id, false);
    csv_write_number(out, r->arrival_s, false);
    csv_write_number(out, r->admitted_s, false);
    csv_write_number(out, r->first_token_s, false);
    csv_write_number(out, r->finish_s, false);
    csv_write_number(out, r->prompt, false);
    csv_write_number(out, r->output, false);
    csv_write_number(out, r->ttft_s, false);
    csv_write_number(out, r->tpot_s, false);
    csv_write_number(out, r->e2e_s, false);
    csv_write_number(out, r->rtt_s, false);
    csv_write_number(out, r->dropped, false);
    fputc('\n', out);
}

int records_commit(records_writer *w, char *err, size_t err_size)
{
    int status = atomic_file_commit(w->file, err, err_size);
    free(w);
    return status;
}

void records_abort(records_writer *w)
{
    if (!w)
        return;
    atomic_file_abort(w->file);
    free(w);
}
