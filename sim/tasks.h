/* Running numbered tasks, here or spread over processes, and merging their results in
 * task order, so what the caller builds does not depend on how many processes ran.
 *
 * A task writes its result as bytes (sim/wire.h); the merge reads them.  Tasks run in
 * this process (jobs 1), in forked worker processes (jobs > 1, sim/workers.h) or on
 * the ranks of an MPI job (sim/mpi_tasks.h); in every case merge sees task 0, 1, 2, ...
 * with the same bytes.  A task's own failure is part of its result (the merge decides
 * what it means); the runner fails only when a process dies or cannot be started.
 */
#ifndef FLEETSIM_SIM_TASKS_H
#define FLEETSIM_SIM_TASKS_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/wire.h"

/* Runs task `task`, writing its result into out (empty on entry). */
typedef void (*sim_task_run_fn)(void *context, size_t task, sim_wire *out);

/* Takes task `task`'s result, in task order.  0 to go on, or -1 with a message in err to
 * stop the round (no later task is merged). */
typedef int (*sim_task_merge_fn)(void *context, size_t task, const unsigned char *result,
                                 size_t size, char *err, size_t err_size);

/* Names task `task` in messages ("point 3, replication 2"), into buf. */
typedef void (*sim_task_describe_fn)(void *context, size_t task, char *buf, size_t size);

/* In a forked worker whose tasks are done, just before it exits: releases what its tasks
 * loaded there, so that a memory checker following the worker finds nothing lost. */
typedef void (*sim_task_exit_fn)(void *context);

typedef struct sim_tasks_config {
    unsigned jobs;  /* worker processes (0 or 1: run in this process) */
    bool mpi;       /* spread over the ranks of the MPI job instead (sim_mpi_size() > 1) */
    sim_task_describe_fn describe; /* NULL: tasks are named by number */
    sim_task_exit_fn worker_exit;  /* NULL: nothing to release */
} sim_tasks_config;

typedef enum sim_tasks_status {
    SIM_TASKS_OK = 0,
    SIM_TASKS_MERGE_FAILED = -1,   /* a merge returned -1: its message is in err */
    SIM_TASKS_WORKER_FAILED = -2,  /* a worker died or could not start: err says which */
} sim_tasks_status;

/* Runs tasks 0 .. ntasks - 1 (a round) and merges their results in order.  Under MPI
 * every rank calls this with the same arguments, and every rank merges every result
 * (so each can decide the next round alike). */
sim_tasks_status sim_tasks_run(const sim_tasks_config *config, size_t ntasks,
                               sim_task_run_fn run, sim_task_merge_fn merge, void *context,
                               char *err, size_t err_size);

#endif
