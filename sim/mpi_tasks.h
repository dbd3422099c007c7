/* Tasks spread over the ranks of an MPI job (see sim/tasks.h).  Built only with
 * `make MPI=1` (FLEETSIM_MPI); in other builds the job is one rank and nothing here
 * needs MPI.
 *
 * Task t runs on rank t mod size, each rank running its tasks in order; then every
 * result is broadcast from its rank in task order, and every rank merges every result,
 * so all ranks hold the same merged state (and take the same decisions after a round).
 * Only rank 0 should write files or print.
 */
#ifndef FLEETSIM_SIM_MPI_TASKS_H
#define FLEETSIM_SIM_MPI_TASKS_H

#include <stdbool.h>

#include "sim/tasks.h"

/* Whether this build has MPI. */
bool sim_mpi_built(void);

/* Joins the MPI job (MPI_Init) in an MPI build; nothing otherwise.  Call once, first. */
void sim_mpi_start(int *argc, char ***argv);

/* Leaves it (MPI_Finalize); nothing otherwise. */
void sim_mpi_stop(void);

/* This process's rank and the job's size (0 and 1 without MPI). */
int sim_mpi_rank(void);
int sim_mpi_size(void);

/* Runs a round over the ranks; every rank calls it with the same arguments.  Without
 * MPI, SIM_TASKS_WORKER_FAILED. */
sim_tasks_status sim_mpi_tasks_run(size_t ntasks, sim_task_run_fn run, sim_task_merge_fn merge,
                                   void *context, char *err, size_t err_size);

#endif
