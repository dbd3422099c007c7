#include "sim/tasks.h"

#include "sim/mpi_tasks.h"
#include "sim/workers.h"

sim_tasks_status sim_tasks_run(const sim_tasks_config *config, size_t ntasks,
                               sim_task_run_fn run, sim_task_merge_fn merge, void *context,
                               char *err, size_t err_size)
{
    if (config->mpi)
        return sim_mpi_tasks_run(ntasks, run, merge, context, err, err_size);
    if (config->jobs > 1 && ntasks > 1)
        return sim_workers_run(config->jobs, ntasks, config->describe, config->worker_exit, run,
                               merge, context, err, err_size);
    /* Here, through the same bytes as a worker's, so a run does not depend on --jobs. */
    sim_tasks_status status = SIM_TASKS_OK;
    for (size_t t = 0; t < ntasks && status == SIM_TASKS_OK; t++) {
        sim_wire result = { 0 };
        run(context, t, &result);
        if (merge(context, t, result.data, result.size, err, err_size) != 0)
            status = SIM_TASKS_MERGE_FAILED;
        sim_wire_release(&result);
    }
    return status;
}
