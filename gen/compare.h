/* compare.h - reading distributions: `show` (rows, histogram of copies, top contents, the
 * compressibility and locality sections) and `compare` (side by side, differences, distances). */
#ifndef DEDIS_GEN_COMPARE_H
#define DEDIS_GEN_COMPARE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include "lib/distcmp.h"
#include "lib/distfile.h"
#include "lib/errmsg.h"

void show_text(FILE *out, const char *name, const struct dist *d, uint64_t top);
json_t *show_json(const char *name, const struct dist *d, uint64_t top);

/* What compare checks (each < 0: not given): the rows (U0, U1, D) in percentage points, the
 * after-dedup compression ratios in %, the TV distance of the zstd eighths (all contents), the
 * locality shares (runs >= 8, sequential) in percentage points. */
struct compare_limits {
	double max_diff, max_ratio_diff, max_tv, max_loc_diff;
};
struct compare_result {
	struct dist_diff rows;
	struct dist_sect_diff sect;
	/* Sizes apart: the larger side's contents with more copies than 1/64 of the smaller side's
	 * blocks (dedisbench's dominant contents) cannot keep their copy count at the smaller size;
	 * a run scaled from the larger keeps their share with fewer copies. scale_note says so
	 * (empty when none). */
	uint64_t dominant_above, dominant_contents;
	double dominant_share;      /* of the larger side's blocks */
	char scale_note[400];
};
/* Fills rows, sect and the scale note. */
void compare_dists(const struct dist *a, const struct dist *b, struct compare_result *out);
void compare_text(FILE *out, const char *na, const char *nb, const struct compare_result *c,
		  const struct compare_limits *lim);
json_t *compare_json(const char *na, const char *nb, const struct compare_result *c, const struct compare_limits *lim);
/* Every limit given is met (a limit on a section one side lacks is not met); err (may be NULL)
 * names the first one that is not. */
bool compare_within(const struct compare_result *c, const struct compare_limits *lim, struct dd_err *err);

/* The sections: a short summary (scan, merge), the JSON objects (null when absent). */
void sections_text(FILE *out, const struct dist *d, const char *indent);
json_t *comp_json(const struct dist_comp *c);
json_t *loc_json(const struct dist_locality *l);
json_t *gran_json(const struct dist_gran *g);

/* The histogram as a JSON array of {copies_min, copies_max, contents, blocks, share}. */
json_t *pow2_json(const struct dist *d);

#endif
