/* errmsg.h - how library code reports a failure: struct dd_err, the one error carrier (a one-line
 * reason, and whether the machine rather than the input failed), and its set/forward helpers. */
#ifndef DEDIS_ERRMSG_H
#define DEDIS_ERRMSG_H

#include <stdbool.h>
#include <stddef.h>

/* Every library function that can fail takes `struct dd_err *err` (last) and returns its error
 * code with err filled: `return err_fail(err, -1, "what: why")`. A caller that adds context
 * forwards: `return err_forward(err, -1, "%s", path)` gives "PATH: callee's reason". Only a
 * tool's main.c prints err->msg and picks the exit status (1 when err->resource, else 2 for bad
 * input). err may be NULL (the reason is dropped). */
struct dd_err {
	char msg[512];
	bool resource; /* memory or descriptors ran out (errmsg_resource): a run's failure, not bad input */
};

/* Formats the reason (control characters shown as '?'), clears resource; returns rc. */
__attribute__((format(printf, 3, 4))) int err_fail(struct dd_err *err, int rc, const char *fmt, ...);
/* As err_fail, then ": strerror(errnum)" appended and resource = errmsg_resource(errnum). */
__attribute__((format(printf, 4, 5))) int err_fail_errno(struct dd_err *err, int rc, int errnum, const char *fmt, ...);
/* Puts "CONTEXT: " before the reason a callee left (resource kept); returns rc. */
__attribute__((format(printf, 3, 4))) int err_forward(struct dd_err *err, int rc, const char *fmt, ...);
void err_clear(struct dd_err *err);

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
