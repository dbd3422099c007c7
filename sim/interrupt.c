#define _DEFAULT_SOURCE /* sigaction's SA_* flags */
#include "sim/interrupt.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t received, deferred;
static sim_engine *volatile watched;

static void on_signal(int sig)
{
    sim_engine *e = watched;
    if (received || (!e && !deferred)) { /* nobody stops gracefully: the default action */
        received = sig;
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    received = sig;
    if (e)
        sim_engine_stop(e);
}

void sim_interrupt_defer(bool defer) { deferred = defer; }

void sim_interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; /* writes and reads go on; poll still returns EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int sim_interrupt_signal(void) { return received; }

void sim_interrupt_watch(sim_engine *engine)
{
    watched = engine;
    if (engine && received) /* a signal that came before the engine existed */
        sim_engine_stop(engine);
}

void sim_interrupt_reset_in_child(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

const char *sim_interrupt_name(int signal_number)
{
    static char buf[32];
    if (signal_number == SIGINT)
        return "SIGINT";
    if (signal_number == SIGTERM)
        return "SIGTERM";
    snprintf(buf, sizeof buf, "signal %d", signal_number);
    return buf;
}

int sim_interrupt_exit_status(int signal_number) { return 128 + signal_number; }
