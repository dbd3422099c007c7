/* SIGINT and SIGTERM during a run: stop at the next event boundary and keep what was
 * measured.
 *
 * sim_interrupt_install() sets handlers for both.  While an engine is watched (a
 * replication's events run) a signal only stops it (sim_engine_stop is sticky and
 * signal-safe), so the program finishes its event, records the replication up to
 * there and writes its files normally, marked as partial (models/run.h).  While a
 * caller defers signals (a parent waiting for its workers) a signal is only recorded,
 * for it to check.  Otherwise (loading, setting up a replication, writing files), and
 * for any second signal, the signal takes its default action at once: setting up a
 * million GPUs is never stuck behind a handler, and files being written stay under
 * their hidden temporary names (output/atomic_file.h), never a final one.
 *
 * Signals belong to the process, so this is process-wide state, the one exception to
 * "a handle, not globals": one engine is watched at a time (a replication's).
 */
#ifndef FLEETSIM_SIM_INTERRUPT_H
#define FLEETSIM_SIM_INTERRUPT_H

#include <stdbool.h>

#include "sim/engine.h"

/* Handlers for SIGINT and SIGTERM, for the rest of the process.  Idempotent. */
void sim_interrupt_install(void);

/* The signal received (SIGINT or SIGTERM), or 0 when none was. */
int sim_interrupt_signal(void);

/* The engine a signal stops (NULL: none).  Watch an engine only while it runs events:
 * clear it before sim_engine_free.  Watching an engine after a signal stops it. */
void sim_interrupt_watch(sim_engine *engine);

/* Signals are recorded only, until sim_interrupt_defer(false); the caller polls
 * sim_interrupt_signal (a call like poll returns EINTR when one comes). */
void sim_interrupt_defer(bool defer);

/* In a forked worker: the default actions again, so that a signal the parent forwards
 * (or the terminal sends to the whole group) ends the worker at once. */
void sim_interrupt_reset_in_child(void);

/* "SIGINT", "SIGTERM" or "signal N". */
const char *sim_interrupt_name(int signal_number);

/* 128 + the signal's number, the shell's convention for a run ended by it (130, 143). */
int sim_interrupt_exit_status(int signal_number);

#endif
