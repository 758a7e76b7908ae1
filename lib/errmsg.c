/* errmsg.c - the shared formatter behind every tool's `fail(...)`: vsnprintf into the caller's
 * message buffer, then hand the error code back. */
#include <stdarg.h>
#include <stdio.h>
#include "errmsg.h"

int errmsg_set(char *buf, size_t len, int rc, const char *fmt, ...)
{
	if (buf && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(buf, len, fmt, ap);
		va_end(ap);
	}
	return rc;
}
