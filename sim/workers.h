/* Tasks in forked worker processes (see sim/tasks.h): each worker runs one task at a
 * time, as the parent hands them out, and sends its result back over a pipe; the parent
 * merges results in task order as they become available. */
#ifndef FLEETSIM_SIM_WORKERS_H
#define FLEETSIM_SIM_WORKERS_H

#include "sim/tasks.h"

/* Runs the round with min(jobs, ntasks) workers forked from this process (they see
 * everything it holds at the call).  A worker that dies (a signal, an exit before its
 * result) stops the round with SIM_TASKS_WORKER_FAILED and a message naming the task;
 * the other workers are then killed.  Every worker has been waited for on return. */
sim_tasks_status sim_workers_run(unsigned jobs, size_t ntasks, sim_task_describe_fn describe,
                                 sim_task_exit_fn worker_exit, sim_task_run_fn run,
                                 sim_task_merge_fn merge, void *context, char *err,
                                 size_t err_size);

#endif
