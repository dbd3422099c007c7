/* A GPU cluster and its tasks from two CSV files, in the shape of Alibaba's
 * cluster-trace-gpu-v2023 (the trace behind "Beware of Fragmentation", USENIX ATC 2023):
 *
 *   nodes: sn,cpu_milli,memory_mib,gpu,model
 *   tasks: name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
 *          creation_time,deletion_time,scheduled_time
 *
 * Columns are found by their header names, in any order; extra columns are ignored.
 * Required: nodes cpu_milli, memory_mib, gpu; tasks cpu_milli, memory_mib, num_gpu,
 * gpu_milli, creation_time, deletion_time.  The others may be absent (a node without
 * model fits any gpu_spec only if the spec is empty; a task without scheduled_time was
 * never scheduled; without pod_phase, Running).
 *
 * A task asks for num_gpu GPUs and gpu_milli thousandths of each: num_gpu = 1 with
 * gpu_milli < 1000 is a share of one GPU, gpu_milli = 1000 whole GPUs, num_gpu = 0 (and
 * gpu_milli = 0) a CPU-only task.  Its arrival is creation_time; it holds its resources
 * for deletion_time - scheduled_time, or deletion_time - creation_time when it was
 * never scheduled (the time it asked for them).  gpu_spec, when not empty, names the
 * GPU models the task accepts, separated by '|'.
 *
 * Both files are parsed a chunk at a time (libcsv) and kept as arrays: a replay needs the
 * whole node list, and a fragmentation-aware policy the distribution of task sizes.
 * Every row is checked; a mistake is an error "file:row N: column: message" (the header
 * is row 1): a malformed row, a bad or out-of-range number, a GPU share that is not
 * 1..1000 thousandths (or not 1000 on several GPUs), a deletion before the creation or
 * the scheduling, a scheduling before the creation, an unknown phase, a missing column.
 */
#ifndef FLEETSIM_MODELS_CLUSTER_TRACE_H
#define FLEETSIM_MODELS_CLUSTER_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLUSTER_MAX_GPUS_PER_NODE 64 /* the placement keeps a node's GPUs in a 64-bit mask */
#define CLUSTER_GPU_MILLI 1000       /* one whole GPU */
#define CLUSTER_MAX_ROWS 20000000u   /* rows of a file (kept in memory: ~1.3 GB of tasks) */

typedef struct cluster_node {
    char *name;           /* sn, or "row N" when the column is absent */
    uint32_t cpu_milli;
    uint32_t memory_mib;
    uint32_t gpus;        /* 0..CLUSTER_MAX_GPUS_PER_NODE */
    char *model;          /* "" when absent */
} cluster_node;

/* Kubernetes pod phases found in the trace. */
typedef enum cluster_phase {
    PHASE_RUNNING,    /* still running when the trace was taken */
    PHASE_SUCCEEDED,
    PHASE_FAILED,     /* ran (it has a scheduled_time) and failed */
    PHASE_PENDING,    /* never scheduled: deleted while waiting */
} cluster_phase;

typedef struct cluster_task {
    uint32_t cpu_milli;
    uint32_t memory_mib;
    uint32_t num_gpu;     /* 0: CPU only */
    uint32_t gpu_milli;   /* per GPU, 1..1000; 0 with num_gpu 0 */
    char *gpu_spec;       /* accepted models, "A|B"; NULL: any */
    cluster_phase phase;
    bool scheduled;       /* the real cluster scheduled it (scheduled_time given) */
    double arrival_s;     /* creation_time, as in the file */
    double duration_s;    /* see above; >= 0 */
    uint64_t row;         /* 1-based, counting the header */
} cluster_task;

typedef struct cluster_trace {
    cluster_node *nodes;  /* in file order */
    size_t nnodes;
    cluster_task *tasks;  /* in file order */
    size_t ntasks;
} cluster_trace;

/* Reads both files into out (release with cluster_trace_release, also after a failure).
 * 0, or -1 with "file:row N: column: message" (or "file: message") in err.  A file
 * without rows is refused. */
int cluster_trace_read(const char *nodes_path, const char *tasks_path, cluster_trace *out,
                       char *err, size_t err_size);
/* Frees the nodes and the tasks; NULL is fine. */
void cluster_trace_release(cluster_trace *t);

/* "Running", "Succeeded", "Failed", "Pending". */
const char *cluster_phase_name(cluster_phase p);

/* Whether a node of this model is acceptable to the task (an empty spec accepts any). */
bool cluster_task_accepts(const cluster_task *task, const char *model);

#endif
