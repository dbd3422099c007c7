/* libFuzzer harness: the request trace reader (models/trace.h) and the cluster trace
 * reader (models/cluster_trace.h) on arbitrary CSV text.
 *
 * The first byte picks the reader and its options: bit 0 the cluster reader, bit 1
 * skip_bad, bit 2 a speedup of 7, bit 3 the session column "session_id" and the block
 * ids column "hash_ids" (of 4 tokens a block when bit 4 is set, else the default).  For the cluster reader the rest of the input is the
 * node list, then a form feed (\f), then the task list. */
#include <stdint.h>
#include <string.h>

#include "models/cluster_trace.h"
#include "models/trace.h"
#include "tests/fuzz/fuzz_support.h"

static void fuzz_request_trace(const uint8_t *data, size_t size, unsigned flags)
{
    const char *path = fuzz_write("trace.csv", data, size);
    trace_options options = {
        .path = path, .time_column = "TIMESTAMP", .prompt_column = "ContextTokens",
        .output_column = "GeneratedTokens", .speedup = flags & 4 ? 7 : 1,
        .skip_bad = flags & 2,
        .session_column = flags & 8 ? "session_id" : NULL,
        .blocks_column = flags & 8 ? "hash_ids" : NULL,
        .block_tokens = flags & 16 ? 4 : 0,
    };
    char err[1024];
    trace_reader *t = trace_open(&options, err, sizeof err);
    if (t) {
        trace_record r;
        uint64_t sum = 0;
        while (trace_next(t, &r, err, sizeof err) == 1)
            for (unsigned i = 0; i < r.nblocks; i++) /* every id the reader hands out */
                sum += r.blocks[i];
        (void)sum;
        trace_skipped(t);
        trace_close(t);
    }
    trace_summary summary;
    trace_scan(&options, &summary, err, sizeof err);
}

static void fuzz_cluster_trace(const uint8_t *data, size_t size)
{
    const uint8_t *split = memchr(data, '\f', size);
    size_t nodes_size = split ? (size_t)(split - data) : size;
    char nodes_path[512];
    strcpy(nodes_path, fuzz_write("nodes.csv", data, nodes_size));
    const uint8_t *tasks = split ? split + 1 : data + size;
    const char *tasks_path = fuzz_write("tasks.csv", tasks, (size_t)(data + size - tasks));
    cluster_trace t;
    char err[1024];
    cluster_trace_read(nodes_path, tasks_path, &t, err, sizeof err);
    for (size_t i = 0; i < t.ntasks && i < 64; i++)
        for (size_t j = 0; j < t.nnodes && j < 64; j++)
            cluster_task_accepts(&t.tasks[i], t.nodes[j].model);
    cluster_trace_release(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned flags = data[0];
    if (flags & 1)
        fuzz_cluster_trace(data + 1, size - 1);
    else
        fuzz_request_trace(data + 1, size - 1, flags);
    return 0;
}
