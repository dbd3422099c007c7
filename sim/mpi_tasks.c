/* The only file that uses MPI (see mpi_tasks.h). */
#include "sim/mpi_tasks.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef FLEETSIM_MPI

#include <mpi.h>
#include <stdint.h>

#include "sim/fatal.h"

bool sim_mpi_built(void) { return true; }

void sim_mpi_start(int *argc, char ***argv) { MPI_Init(argc, argv); }

void sim_mpi_stop(void) { MPI_Finalize(); }

int sim_mpi_rank(void)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

int sim_mpi_size(void)
{
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
}

/* MPI counts are ints: a result goes in pieces of at most 1 GiB. */
static void broadcast_bytes(unsigned char *data, size_t size, int root)
{
    const size_t piece = (size_t)1 << 30;
    for (size_t at = 0; at < size; at += piece) {
        size_t n = size - at < piece ? size - at : piece;
        MPI_Bcast(data + at, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
    }
}

sim_tasks_status sim_mpi_tasks_run(size_t ntasks, sim_task_run_fn run, sim_task_merge_fn merge,
                                   void *context, char *err, size_t err_size)
{
    int rank = sim_mpi_rank(), size = sim_mpi_size();
    sim_wire *mine = calloc(ntasks + 1, sizeof *mine);
    if (!mine)
        sim_out_of_memory("out of memory for %zu task results", ntasks);
    for (size_t t = (size_t)rank; t < ntasks; t += (size_t)size)
        run(context, t, &mine[t]);
    sim_tasks_status status = SIM_TASKS_OK;
    for (size_t t = 0; t < ntasks && status == SIM_TASKS_OK; t++) {
        int owner = (int)(t % (size_t)size);
        uint64_t n = mine[t].size;
        MPI_Bcast(&n, 1, MPI_UINT64_T, owner, MPI_COMM_WORLD);
        unsigned char *data = mine[t].data;
        if (owner != rank && n > 0 && !(data = malloc((size_t)n)))
            sim_out_of_memory("out of memory receiving a result of %llu bytes", (unsigned long long)n);
        broadcast_bytes(data, (size_t)n, owner);
        /* every rank merges the same bytes, so every rank stops at the same task */
        if (merge(context, t, data, (size_t)n, err, err_size) != 0)
            status = SIM_TASKS_MERGE_FAILED;
        if (owner != rank)
            free(data);
    }
    for (size_t t = 0; t < ntasks; t++)
        sim_wire_release(&mine[t]);
    free(mine);
    return status;
}

#else /* no MPI in this build: one rank */

bool sim_mpi_built(void) { return false; }
void sim_mpi_start(int *argc, char ***argv) { (void)argc, (void)argv; }
void sim_mpi_stop(void) {}
int sim_mpi_rank(void) { return 0; }
int sim_mpi_size(void) { return 1; }

sim_tasks_status sim_mpi_tasks_run(size_t ntasks, sim_task_run_fn run, sim_task_merge_fn merge,
                                   void *context, char *err, size_t err_size)
{
    (void)ntasks, (void)run, (void)merge, (void)context;
    snprintf(err, err_size, "this fleetsim was built without MPI (make MPI=1)");
    return SIM_TASKS_WORKER_FAILED;
}

#endif
