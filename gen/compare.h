/* compare.h - reading distributions: `show` (rows, histogram of copies, top contents) and
 * `compare` (rows side by side, differences, total-variation distance), as text or JSON. */
#ifndef DEDIS_GEN_COMPARE_H
#define DEDIS_GEN_COMPARE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include "distcmp.h"
#include "distfile.h"

void show_text(FILE *out, const char *name, const struct dist *d, uint64_t top);
json_t *show_json(const char *name, const struct dist *d, uint64_t top);

/* max_diff < 0: not given. *within: every row within max_diff (true when not given). */
void compare_text(FILE *out, const char *na, const char *nb, const struct dist_diff *df, double max_diff);
json_t *compare_json(const char *na, const char *nb, const struct dist_diff *df, double max_diff);
bool compare_within(const struct dist_diff *df, double max_diff);

/* The histogram as a JSON array of {copies_min, copies_max, contents, blocks, share}. */
json_t *pow2_json(const struct dist *d);

#endif
