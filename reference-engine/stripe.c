/* stripe.c - the striped lock file: one robust mutex per index stripe of the volume, shared by every opener; a lock
 * whose owner died reports it once (made consistent here) so the engine can run its recovery. */
#include <errno.h>
#include <sys/mman.h>
#include "reference-engine/meta.h"
#include "reference-engine/stripe.h"

static size_t locks_len(const struct stripes *s)
{
	return s->count * sizeof(pthread_mutex_t);
}

int stripes_open(struct stripes *s, const char *dir, unsigned count, int init)
{
	if (!count || (count & (count - 1)))
		return -EINVAL;
	s->count = count;
	s->locks = meta_map(dir, VOL_LOCKS, locks_len(s), 1, NULL);
	if (!s->locks)
		return errno ? -errno : -EIO;
	for (unsigned i = 0; init && i < count; i++) {
		int rc = meta_init_mutex(&s->locks[i]);
		if (rc)
			return rc;
	}
	return 0;
}

void stripes_close(struct stripes *s)
{
	if (s->locks)
		munmap(s->locks, locks_len(s));
	s->locks = NULL;
}

int stripe_lock(struct stripes *s, unsigned stripe)
{
	pthread_mutex_t *m = &s->locks[stripe & (s->count - 1)];
	int rc = pthread_mutex_lock(m);
	if (rc == EOWNERDEAD) {
		pthread_mutex_consistent(m);
		return STRIPE_OWNER_DIED;
	}
	return -rc;
}

void stripe_unlock(struct stripes *s, unsigned stripe)
{
	pthread_mutex_unlock(&s->locks[stripe & (s->count - 1)]);
}
