/* stopsignals.h - the signals that stop a run, a scan or a command cleanly (SIGINT, SIGTERM, and
 * SIGHUP unless nohup ignores it), and SIGPIPE caught, so a reader gone is a failed write. */
#ifndef DEDIS_STOPSIGNALS_H
#define DEDIS_STOPSIGNALS_H

#include <signal.h>

/* Adds SIGINT, SIGTERM and SIGHUP (where it is not ignored) to set. */
void stop_signals_set(sigset_t *set);
/* on_stop for each signal of stop_signals_set. */
void stop_signals_catch(void (*on_stop)(int));
/* SIGPIPE caught by a handler that does nothing: a write to a reader gone fails with EPIPE, said
 * and cleaned up after, instead of ending the process. Caught, not ignored: what it executes
 * (gnuplot, --space-cmd) gets the default back. */
void stop_signals_catch_pipe(void);

#endif
