/* index-registry.c - the fingerprint indexes a volume can be formatted with, one line each, and
 * lookups by name: adding an index is its file, its line here and its line in Makefile.am. */
#include <stdio.h>
#include <string.h>
#include "reference-engine/fpindex.h"

/* In the order --help and error messages list them; the first is the default. */
#define FPINDEXES(X) \
	X(index_mem_ops) \
	X(index_bdb_ops) \
	X(index_bloom_ops) \
	/* a new index: X(its ops) above this line */

#define DECLARE(ops) extern const struct index_ops ops;
#define ENTRY(ops) &ops,
FPINDEXES(DECLARE)
const struct index_ops *const fpindex_registry[] = {FPINDEXES(ENTRY) NULL};

const struct index_ops *index_find(const char *name)
{
	for (size_t i = 0; name && fpindex_registry[i]; i++)
		if (!strcmp(fpindex_registry[i]->name, name))
			return fpindex_registry[i];
	return NULL;
}

const char *fpindex_names(char *buf, size_t len, const char *sep, unsigned flags)
{
	size_t used = 0;
	if (len)
		buf[0] = 0;
	for (size_t i = 0; fpindex_registry[i] && used < len; i++) {
		if ((fpindex_registry[i]->flags & flags) != flags)
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? sep : "", fpindex_registry[i]->name);
		used += n > 0 ? (size_t)n : 0;
	}
	return buf;
}

const char *fpindex_help(char *buf, size_t len)
{
	size_t used = 0, n = 0;
	while (fpindex_registry[n])
		n++;
	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < n && used < len; i++) {
		const struct index_ops *ix = fpindex_registry[i];
		int k = snprintf(buf + used, len - used, "%s%s%s%s%s", !i ? "" : i + 1 < n ? ", " : " or ", ix->name,
				 ix->about ? " (" : "", ix->about ? ix->about : "", ix->about ? ")" : "");
		used += k > 0 ? (size_t)k : 0;
	}
	return buf;
}
