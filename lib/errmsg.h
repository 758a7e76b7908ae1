/* errmsg.h - how library code reports a failure: a one-line reason formatted into the caller's
 * buffer and the error code returned, so `return fail(...)` is a single step everywhere. */
#ifndef DEDIS_ERRMSG_H
#define DEDIS_ERRMSG_H

#include <stdbool.h>
#include <stddef.h>

/* Formats into buf (when buf and len are non-zero), control characters (a newline quoted from
 * the input) shown as '?', and returns rc. */
__attribute__((format(printf, 4, 5))) int errmsg_set(char *buf, size_t len, int rc, const char *fmt, ...);

/* s as a message quotes it: whole when it fits in len - 1 bytes, else its first len - 4 and "...",
 * so a long argument cannot push the reason out of a message buffer. Returns buf. */
const char *errmsg_quote(const char *s, char *buf, size_t len);

/* Is e the machine running out (memory, descriptors: ENOMEM, EMFILE, ENFILE) rather than
 * something wrong with the input? Such a failure is a run's (exit 1), never bad input's (2). */
bool errmsg_resource(int e);

#endif
