/* fanout.h - one job function run by up to n threads at once, this one included: each thread
 * takes its work from a shared counter in the argument, so a thread that cannot be started
 * leaves its share to the others. */
#ifndef DEDIS_FANOUT_H
#define DEDIS_FANOUT_H
#include <stddef.h>

/* fn(arg) on this thread and on up to n - 1 more; returns when all have returned. */
void fanout_run(size_t n, void *(*fn)(void *), void *arg);
/* The online cores, at least 1. */
size_t fanout_cores(void);

#endif
