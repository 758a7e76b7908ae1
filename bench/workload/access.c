/* access.c - the access-pattern registry (one line per pattern, in --access order) and the
 * set-up of a worker's generator from it. */
#include <string.h>
#include "bench/workload/access.h"

/* Each X(name) is a pattern defined as access_<name> in access_<name>.c. Append only: the
 * position is the option's value and the INI access_type number. */
#define ACCESS_PATTERNS(X) \
	X(seq)             \
	X(uniform)         \
	X(nurand)          \
	/* end of the registry */

#define DECLARE_PATTERN(n) extern const struct access_pattern access_##n;
#define PATTERN_ADDRESS(n) &access_##n,
#define PATTERN_NAME(n) #n,

ACCESS_PATTERNS(DECLARE_PATTERN)
const struct access_pattern *const access_patterns[] = {ACCESS_PATTERNS(PATTERN_ADDRESS) NULL};
const char *const access_names[] = {ACCESS_PATTERNS(PATTERN_NAME) NULL};

const struct access_pattern *access_pattern_find(const char *name)
{
	for (size_t i = 0; access_names[i]; i++)
		if (!strcmp(access_names[i], name))
			return access_patterns[i];
	return NULL;
}

void access_init(struct access_gen *g, int index, uint64_t nblocks, uint64_t a, uint64_t c)
{
	const struct access_pattern *p = access_patterns[index];
	const struct access_setup s = {.nblocks = nblocks, .a = a, .c = c};
	*g = (struct access_gen){.next = p->next, .pattern = p, .nblocks = nblocks};
	p->init(g, &s);
}
