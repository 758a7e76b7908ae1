/* argv_check.h - shared by the command-line harnesses of dedisgen and dedisengine: splitting an
 * input into NUL-separated arguments, and what must hold of any refusal - one line with a
 * reason, and where it names an option, an option that was given. */
#ifndef DEDIS_FUZZ_ARGV_CHECK_H
#define DEDIS_FUZZ_ARGV_CHECK_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"

#define ARGV_MAX 24

/* text: a NUL-terminated copy of the input (len bytes + 1); argv[0] is prog. Returns argc. */
static inline int argv_split(char *text, size_t len, const char *prog, char **argv)
{
	int argc = 0;
	argv[argc++] = (char *)prog;
	for (size_t at = 0; at <= len && argc < ARGV_MAX + 1; at += strlen(text + at) + 1)
		argv[argc++] = text + at;
	argv[argc] = NULL;
	return argc;
}

/* as errmsg_set shows an argument: control characters as '?' */
static inline bool argv_same_shown(const char *shown, size_t n, const char *arg)
{
	if (strlen(arg) != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char a = (unsigned char)arg[i];
		if ((a < 0x20 || a == 0x7f ? '?' : (char)a) != shown[i])
			return false;
	}
	return true;
}

/* An error that quotes an option ("unknown option 'X'", "option 'X' needs a value") must quote
 * one the user gave: an argument starting with '-', or "-c" for a letter c of such an argument
 * (a cluster like -qZ). argv as given (a copy: getopt permutes the parser's). */
static inline void argv_check_quoted_option(const char *msg, int argc, char *const *argv)
{
	const char *p = strstr(msg, "unknown option '");
	if (p)
		p += strlen("unknown option '");
	else if ((p = strstr(msg, "option '")) && strstr(p, "' needs a value"))
		p += strlen("option '");
	else
		return;
	const char *end = strstr(p, "' (see --help)");
	if (!end)
		end = strstr(p, "' needs a value");
	if (!end)
		end = strrchr(p, '\'');
	if (!end || end == p)
		harness_fail("an option error quotes nothing: %s", msg);
	size_t n = (size_t)(end - p);
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-')
			continue;
		if (argv_same_shown(p, n, argv[i]))
			return;
		/* quoted shortened (errmsg_quote): its first bytes, then "..." */
		if (n > 3 && !strncmp(p + n - 3, "...", 3) && strlen(argv[i]) > n - 3) {
			char head[128];
			size_t k = n - 3 < sizeof head - 1 ? n - 3 : sizeof head - 1;
			memcpy(head, argv[i], k);
			head[k] = 0;
			if (argv_same_shown(p, k, head))
				return;
		}
		if (n == 2 && p[0] == '-' && argv[i][1] != '-')
			for (const char *c = argv[i] + 1; *c; c++)
				if (*c == p[1] || (((unsigned char)*c < 0x20 || *c == 0x7f) && p[1] == '?'))
					return;
	}
	harness_fail("the error quotes an option that was not given: %s", msg);
}

static inline void argv_check_error(const char *msg, size_t size, int argc, char *const *argv)
{
	size_t n = strnlen(msg, size);
	if (!n || n == size || strchr(msg, '\n'))
		harness_fail("an option error is not one line: %.80s", msg);
	/* a message that fills its buffer was cut: the reason after a quoted argument is lost */
	if (n == size - 1)
		harness_fail("an option error fills its %zu bytes (cut): %.80s...", size, msg);
	/* a reason that was never set prints as "(null)" (unless an argument says so itself) */
	bool quoted_null = false;
	for (int i = 1; i < argc; i++)
		quoted_null |= strstr(argv[i], "(null)") != NULL;
	if ((strstr(msg, "(null)") && !quoted_null) || msg[n - 1] == ' ' || msg[n - 1] == ':')
		harness_fail("an option error without its reason: %s", msg);
	argv_check_quoted_option(msg, argc, argv);
}

#endif
