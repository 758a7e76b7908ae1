/* registry.c - the list of I/O engines by name; adding an engine is one line here plus its
 * own file. */
#include <string.h>
#include "ioengine.h"

static const struct ioengine_ops *const engines[] = {
	&ioengine_sync,
	&ioengine_libaio,
	&ioengine_null,
	&ioengine_engine,
};

const struct ioengine_ops *ioengine_find(const char *name)
{
	for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	return NULL;
}
