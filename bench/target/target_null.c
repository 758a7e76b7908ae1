/* target_null.c - the null target: nothing stored, every operation done by the null I/O engine at
 * once, so a run measures the generator and the harness alone. */
#include <string.h>
#include "bench/ioengine/ioengine.h"
#include "bench/target/targetkind.h"

static bool null_match(const char *path, const struct stat *st)
{
	return !st && !strcmp(path, "null");
}

/* No alignment, no lock: there is nothing to share or to hit. */
static int null_probe(const struct target_request *req, struct target *t, const struct stat *st, struct dd_err *err)
{
	(void)st, (void)err;
	t->region_size = req->file_size;
	t->sector_size = 512;
	return 0;
}

const struct target_ops target_null_ops = {
	.name = "null",
	.usage = "null",
	.about = "no I/O: the generator alone",
	.flags = TARGET_STORES_NOTHING,
	.io = &ioengine_null,
	.match = null_match,
	.probe = null_probe,
};
