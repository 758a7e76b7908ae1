/* options_check.h - what must hold of dedisbench's options after any successful parse (shared
 * by the job-file and command-line harnesses): every value within its row's range, the JSON
 * config buildable; and of any failed one: one line of error. */
#ifndef DEDIS_FUZZ_OPTIONS_CHECK_H
#define DEDIS_FUZZ_OPTIONS_CHECK_H

#include <stdlib.h>
#include <string.h>
#include "lib/units.h"
#include "harness.h"
#include "bench/benchopts.h"

static inline void options_check_error(const struct dd_err *err)
{
	size_t n = strnlen(err->msg, sizeof err->msg);
	if (!n || n == sizeof err->msg || strchr(err->msg, '\n'))
		harness_fail("an option error is not one line: %.80s", err->msg);
	/* a message that fills its buffer was cut: the reason after a quoted value is lost */
	if (n == sizeof err->msg - 1)
		harness_fail("an option error fills its %zu bytes (cut): %.80s...", sizeof err->msg, err->msg);
}

static inline void options_check_values(struct bench_cli *cli)
{
	for (size_t i = 0; i < bench_option_count; i++) {
		const struct opt_row *d = &bench_option_table[i];
		const void *p = (const char *)&cli->o + d->offset;
		if (d->type == OT_UINT || d->type == OT_SIZE) {
			uint64_t v = *(const uint64_t *)p, words = 0;
			while (d->type == OT_UINT && d->choices && d->choices[words])
				words++;
			/* a row with words (--compress dist) stores a word's index below its range */
			if ((v < d->min && v >= words) || (d->max && v > d->max))
				harness_fail("--%s holds %llu, outside %llu..%llu", d->name ? d->name : "?",
					     (unsigned long long)v, (unsigned long long)d->min, (unsigned long long)d->max);
		} else if (d->type == OT_ENUM) {
			int v = *(const int *)p;
			int n = 0;
			while (d->choices[n])
				n++;
			if (v < 0 || v >= n)
				harness_fail("--%s holds choice %d of %d", d->name, v, n);
		} else if (d->type == OT_RATE || d->type == OT_CUSTOM) {
			double v = *(const double *)p;
			if (!(v >= 0) || v > UNITS_RATE_MAX)
				harness_fail("--%s holds rate %g", d->name ? d->name : "?", v);
		} else if (d->type == OT_STRING) {
			const char *s = *(char *const *)p;
			if (s && !*s)
				harness_fail("--%s holds an empty string", d->name);
		}
	}
	json_t *j = options_to_json(&cli->o);
	char *text = j ? json_dumps(j, 0) : NULL;
	if (!text)
		harness_fail("the JSON config cannot be built");
	free(text);
	json_decref(j);
}

#endif
