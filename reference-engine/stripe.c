/* stripe.c - the striped lock file: STRIPE_COUNT robust mutexes shared by every opener; a lock
 * whose owner died reports it once (made consistent here) so the engine can run its recovery. */
#include <errno.h>
#include <sys/mman.h>
#include "meta.h"
#include "stripe.h"

#define LOCKS_LEN (STRIPE_COUNT * sizeof(pthread_mutex_t))

int stripes_open(struct stripes *s, const char *dir, int init)
{
	s->locks = meta_map(dir, VOL_LOCKS, LOCKS_LEN, 1, NULL);
	if (!s->locks)
		return errno ? -errno : -EIO;
	for (unsigned i = 0; init && i < STRIPE_COUNT; i++) {
		int rc = meta_init_mutex(&s->locks[i]);
		if (rc)
			return rc;
	}
	return 0;
}

void stripes_close(struct stripes *s)
{
	if (s->locks)
		munmap(s->locks, LOCKS_LEN);
	s->locks = NULL;
}

int stripe_lock(struct stripes *s, unsigned stripe)
{
	pthread_mutex_t *m = &s->locks[stripe % STRIPE_COUNT];
	int rc = pthread_mutex_lock(m);
	if (rc == EOWNERDEAD) {
		pthread_mutex_consistent(m);
		return STRIPE_OWNER_DIED;
	}
	return -rc;
}

void stripe_unlock(struct stripes *s, unsigned stripe)
{
	pthread_mutex_unlock(&s->locks[stripe % STRIPE_COUNT]);
}
