/* stopsignals.c - the stop signals (SIGINT, SIGTERM, SIGHUP unless ignored) as a set and as
 * handlers, and SIGPIPE caught (see stopsignals.h). */
#include <stddef.h>
#include "lib/stopsignals.h"

void stop_signals_set(sigset_t *set)
{
	struct sigaction hup;
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler != SIG_IGN)
		sigaddset(set, SIGHUP);
}

void stop_signals_catch(void (*on_stop)(int))
{
	sigset_t set;
	sigemptyset(&set);
	stop_signals_set(&set);
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&set, sig) == 1)
			sigaction(sig, &sa, NULL);
}

static void on_sigpipe(int sig)
{
	(void)sig;
}

void stop_signals_catch_pipe(void)
{
	struct sigaction sa = {.sa_handler = on_sigpipe};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, NULL);
}
