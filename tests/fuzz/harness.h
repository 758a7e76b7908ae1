/* harness.h - what every fuzz harness provides to driver.c: a one-time setup and one input's
 * run. A harness reports a defect by aborting (harness_fail), so AFL and the replay both see it. */
#ifndef DEDIS_FUZZ_HARNESS_H
#define DEDIS_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Once per process, before the first input (0, or -1: the harness cannot run). */
int harness_setup(void);
/* One input. Must leave no state behind that changes how the next input runs. */
void harness_one(const uint8_t *data, size_t len);

/* A property does not hold: say which, and abort (a crash to AFL, a failure to make check). */
__attribute__((noreturn, format(printf, 1, 2))) void harness_fail(const char *fmt, ...);

/* The input as a NUL-terminated string the caller frees (text harnesses; a NUL inside ends what
 * a C string of it holds). */
static inline char *harness_text(const uint8_t *data, size_t len)
{
	char *text = malloc(len + 1);
	if (!text)
		harness_fail("out of memory");
	memcpy(text, data, len);
	text[len] = 0;
	return text;
}

#endif