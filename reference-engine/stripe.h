/* stripe.h - fingerprint-striped locks: a shared file of process-shared robust mutexes, one per
 * index stripe, so writers of different fingerprints never wait for each other. */
#ifndef DEDIS_ENGINE_STRIPE_H
#define DEDIS_ENGINE_STRIPE_H

#include <pthread.h>
#include <stdint.h>

struct stripes {
	pthread_mutex_t *locks; /* `count`, mmap'd from <dir>/locks */
	unsigned count;         /* the volume's index stripes (superblock): a power of two */
};

/* Map (creating when missing) the lock file of `count` locks; `init` re-initialises every lock
 * (only when no other process has the volume open). 0 or -errno. */
int stripes_open(struct stripes *s, const char *dir, unsigned count, int init);
void stripes_close(struct stripes *s);
/* 0 locked; STRIPE_OWNER_DIED locked, but its last owner died inside (the caller repairs);
 * -errno. */
#define STRIPE_OWNER_DIED 1
int stripe_lock(struct stripes *s, unsigned stripe);
void stripe_unlock(struct stripes *s, unsigned stripe);

#endif
