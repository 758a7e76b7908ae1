/* errmsg.c - the shared formatter behind every tool's `fail(...)`: vsnprintf into the caller's
 * message buffer, then hand the error code back. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "lib/errmsg.h"

int errmsg_set(char *buf, size_t len, int rc, const char *fmt, ...)
{
	if (buf && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(buf, len, fmt, ap);
		va_end(ap);
		/* A message quotes what it was given (a value, a path): a newline or another control
		 * character in it must not break the message's one line, nor drive a terminal. */
		for (char *c = buf; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
	}
	return rc;
}

const char *errmsg_quote(const char *s, char *buf, size_t len)
{
	size_t n = strlen(s);
	if (n < len) {
		memcpy(buf, s, n + 1);
	} else {
		memcpy(buf, s, len - 4);
		memcpy(buf + len - 4, "...", 4);
	}
	return buf;
}

bool errmsg_resource(int e)
{
	return e == ENOMEM || e == EMFILE || e == ENFILE;
}
