/* fanout.c - one job function run by up to n threads at once (see fanout.h); the threads are
 * joined before it returns. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "lib/fanout.h"

void fanout_run(size_t n, void *(*fn)(void *), void *arg)
{
	size_t helpers = n > 1 ? n - 1 : 0, started = 0;
	pthread_t *tids = helpers ? malloc(helpers * sizeof *tids) : NULL;
	while (tids && started < helpers && !pthread_create(&tids[started], NULL, fn, arg))
		started++;
	fn(arg);
	for (size_t i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	free(tids);
}

size_t fanout_cores(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	return cores > 1 ? (size_t)cores : 1;
}
