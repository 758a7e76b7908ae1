/* errmsg.c - the shared formatter behind every error: vsnprintf into the caller's message buffer
 * (or its struct dd_err), then hand the error code back. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdbool.h>
#include "lib/errmsg.h"

static void sanitize(char *buf)
{
	/* A message quotes what it was given (a value, a path): a newline or another control
	 * character in it must not break the message's one line, nor drive a terminal. */
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

int errmsg_set(char *buf, size_t len, int rc, const char *fmt, ...)
{
	if (buf && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(buf, len, fmt, ap);
		va_end(ap);
		sanitize(buf);
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

/* Appends s to the string in buf (cap bytes), cut at the buffer's end. */
static void append(char *buf, size_t cap, const char *s)
{
	size_t used = strlen(buf), n = strlen(s);
	if (used + 1 >= cap)
		return;
	n = n < cap - 1 - used ? n : cap - 1 - used;
	memcpy(buf + used, s, n);
	buf[used + n] = 0;
}

int err_fail(struct dd_err *err, int rc, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		sanitize(err->msg);
		err->resource = false;
	}
	return rc;
}

int err_fail_errno(struct dd_err *err, int rc, int errnum, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		append(err->msg, sizeof err->msg, ": ");
		append(err->msg, sizeof err->msg, strerror(errnum));
		sanitize(err->msg);
		err->resource = errmsg_resource(errnum);
	}
	return rc;
}

int err_forward(struct dd_err *err, int rc, const char *fmt, ...)
{
	if (err) {
		char reason[sizeof err->msg];
		memcpy(reason, err->msg, sizeof reason);
		reason[sizeof reason - 1] = 0;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		append(err->msg, sizeof err->msg, ": ");
		append(err->msg, sizeof err->msg, reason);
		sanitize(err->msg);
	}
	return rc;
}

void err_clear(struct dd_err *err)
{
	if (err) {
		err->msg[0] = 0;
		err->resource = false;
	}
}
