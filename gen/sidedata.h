/* sidedata.h - what a Berkeley DB analysis keeps besides its counts: the compressibility samples
 * ('s' records) and the resolved locality windows ('l' records), loaded for -k / merge, saved. */
#ifndef DEDIS_GEN_SIDEDATA_H
#define DEDIS_GEN_SIDEDATA_H

#include "gen/compsample.h"
#include "gen/index/gindex.h"
#include "gen/locstats.h"
#include "lib/errmsg.h"

/* Each returns 0, or -1 with err filled (a DB error, a corrupt record, out of memory). */
int side_load_samples(struct gindex *db, struct comp_sampler *s, uint64_t block_size, struct dd_err *err);
/* Replaces the DB's samples with the sampler's (those selected at its rate); s NULL: none. */
int side_save_samples(struct gindex *db, const struct comp_sampler *s, struct dd_err *err);
int side_load_windows(struct gindex *db, struct loc_recorder *r, struct dd_err *err);
/* Replaces the DB's locality windows with the recorder's (after loc_compute); r NULL: none. */
int side_save_windows(struct gindex *db, const struct loc_recorder *r, struct dd_err *err);

#endif
