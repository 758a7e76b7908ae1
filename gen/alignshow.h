/* alignshow.h - dedisgen's words and JSON for [alignment 1] and [cdc 1]: a summary line each, the
 * tables of `show`, and the objects of --json. */
#ifndef DEDIS_GEN_ALIGNSHOW_H
#define DEDIS_GEN_ALIGNSHOW_H

#include <jansson.h>
#include <stdio.h>
#include "lib/distfile.h"

/* Fixed dedup at 2 << i blocks (0 when no record was counted). */
double align_ratio(const struct dist_align *a, int i);
/* The share of copied blocks whose (copy - source) is a multiple of k blocks (k divides 32). */
double align_copies_at(const struct dist_align *a, unsigned k);
/* The CDC dedup ratio: sampled bytes over their distinct bytes (0: none sampled). */
double cdc_ratio(const struct dist_cdc *c);

/* One line per section present, after `indent` (the scan's summary, show's header). */
void align_cdc_summary(FILE *out, const struct dist *d, const char *indent);
/* show's tables of the sections present. */
void align_cdc_tables(FILE *out, const struct dist *d);
/* --json: null when the section is absent. */
json_t *align_json(const struct dist_align *a, uint64_t block_size);
json_t *cdc_json(const struct dist_cdc *c);

#endif
