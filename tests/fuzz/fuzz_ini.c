/* fuzz_ini.c - dedisbench's INI job file (bench/benchopts.c: libinih, the option table, the
 * original DEDISbench keys) on any text: a one-line error, or options all within range. */
#include <stdlib.h>
#include <string.h>
#include "options_check.h"

int harness_setup(void)
{
	return 0;
}

void harness_one(const uint8_t *data, size_t len)
{
	/* A job file with a NUL byte is refused before parsing (options_load_ini); the parser
	 * sees text up to the first one. */
	char *text = harness_text(data, len);
	struct bench_cli cli;
	struct dd_err err;
	options_defaults(&cli);
	if (options_parse_ini_text(&cli, text, "fuzz.ini", &err)) {
		options_check_error(&err);
		if (strncmp(err.msg, "config file fuzz.ini:", 21))
			harness_fail("the error does not name the file and line: %.80s", err.msg);
	} else {
		options_check_values(&cli);
	}
	options_free(&cli.o);
	free(text);
}
