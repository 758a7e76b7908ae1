/* registry.c - the list of I/O engines (adding an engine is one line here plus its own file and
 * its build line): lookups, --ioengine's choices and help lists, each engine's option slice and rows. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "lib/opttable.h"
#include "bench/ioengine/ioengine.h"

/* One line per engine, X(name) for `const struct ioengine_ops ioengine_<name>` in its own file;
 * the order is --ioengine's (the first is the default). */
#define IOENGINES(X) \
	X(sync) \
	X(libaio) \
	X(io_uring) \
	X(null) \
	X(engine)

#define DECLARE(n) extern const struct ioengine_ops ioengine_##n;
IOENGINES(DECLARE)
#define ENTRY(n) &ioengine_##n,
static const struct ioengine_ops *const engines[] = {IOENGINES(ENTRY)};

const struct ioengine_ops *ioengine_find(const char *name)
{
	for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	return NULL;
}

size_t ioengine_count(void)
{
	return sizeof engines / sizeof engines[0];
}

const struct ioengine_ops *ioengine_at(size_t i)
{
	return i < ioengine_count() ? engines[i] : NULL;
}

const struct ioengine_ops *ioengine_choice(size_t i)
{
	for (size_t k = 0; k < ioengine_count(); k++)
		if (!(engines[k]->flags & IOENGINE_BY_TARGET) && i-- == 0)
			return engines[k];
	return NULL;
}

size_t ioengine_opts_offset(const struct ioengine_ops *e)
{
	size_t off = 0;
	for (size_t k = 0; k < ioengine_count() && engines[k] != e; k++)
		off += (engines[k]->opts_size + 7) & ~(size_t)7;
	return off;
}

void ioengine_names_with(unsigned flags, const char *last_sep, char *buf, size_t len)
{
	size_t total = 0, k = 0, n = 0;
	for (size_t i = 0; ioengine_choice(i); i++)
		total += (ioengine_choice(i)->flags & flags) == flags;
	buf[0] = 0;
	for (size_t i = 0; ioengine_choice(i); i++) {
		if ((ioengine_choice(i)->flags & flags) != flags)
			continue;
		const char *sep = k == 0 ? "" : k + 1 == total ? last_sep : ", ";
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", sep, ioengine_choice(i)->name);
		k++;
	}
}

const struct ioengine_ops *ioengine_option_owner(const char *name)
{
	for (size_t e = 0; ioengine_at(e); e++)
		for (size_t i = 0; i < ioengine_at(e)->noptions; i++)
			if (ioengine_at(e)->options[i].name && !strcmp(ioengine_at(e)->options[i].name, name))
				return ioengine_at(e);
	return NULL;
}
