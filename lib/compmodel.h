/* compmodel.h - the compressibility model of a run: a distribution's [compressibility] cells turned
 * into content recipes (calibrated on the real zstd and LZ4), and each content's recipe by class. */
#ifndef DEDIS_COMPMODEL_H
#define DEDIS_COMPMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/content.h"
#include "lib/distfile.h"
#include "lib/errmsg.h"

/* What a recipe's blocks compress to, each alone, in bytes (measured while calibrating). */
struct compmodel_sizes {
	double zstd, lz4;
};

struct compmodel;

/* Build the model for blocks of block_size bytes. Each cell's target (its mean sizes, as shares of
 * the block) becomes the recipe whose blocks compress closest to it; a copy class with fewer than
 * COMPMODEL_MIN_MEASURED measured contents borrows the cells of its nearest classes. Returns 0,
 * or -1 with err set (out of memory, a compressor failing). */
#define COMPMODEL_MIN_MEASURED 32
int compmodel_build(struct compmodel **out, const struct dist_comp *comp, uint32_t block_size,
		    struct dd_err *err);
void compmodel_free(struct compmodel *m);

/* The cell content `id` of copy class `cls` falls in: a pure function of (seed, id), so every
 * copy of a content, in every process, gets the same one. Then its recipe and expected sizes. */
size_t compmodel_cell(const struct compmodel *m, unsigned cls, uint64_t seed, uint64_t id);
content_recipe compmodel_recipe(const struct compmodel *m, size_t cell);
/* Does copy class cls borrow its cells (fewer than COMPMODEL_MIN_MEASURED measured contents of its
 * own)? The classes it takes them from in *lo..*hi either way. */
bool compmodel_borrowed(const struct compmodel *m, unsigned cls, unsigned *lo, unsigned *hi);
/* From now on every model recipe names this vocabulary (content.h: share/128 of the literals from
 * a pool of 4 KiB << pool; share 0: none, as built), and, when banded, neighbouring ids (a band of
 * content.h) pick cells that compress alike, as a file's blocks do. Plain cells stay plain. */
void compmodel_set_vocabulary(struct compmodel *m, uint32_t share, uint32_t pool, bool banded);
struct compmodel_sizes compmodel_expected(const struct compmodel *m, size_t cell);
/* What the cell was asked to reach (the distribution's means, in bytes of this block size). */
struct compmodel_sizes compmodel_target(const struct compmodel *m, size_t cell);
size_t compmodel_ncells(const struct compmodel *m);

static inline content_recipe compmodel_pick(const struct compmodel *m, unsigned cls, uint64_t seed, uint64_t id)
{
	return compmodel_recipe(m, compmodel_cell(m, cls, seed, id));
}

/* The copy class of a content stored `copies` times: floor(log2(copies)) (0 for 0 or 1). */
static inline unsigned compmodel_class(uint64_t copies)
{
	return copies > 1 ? 63u - (unsigned)__builtin_clzll(copies) : 0u;
}

/* Sizes of one block compressed alone by zstd -1 and LZ4 (capped at its length): the one
 * measurement dedisgen's sampling, dedisbench's physical estimate and the calibration share. */
struct compmodel_codecs;
/* Codec state with room for blocks of up to max_block bytes (a larger block grows it; 0: grown on
 * first use). NULL out of memory. */
struct compmodel_codecs *compmodel_codecs_new(size_t max_block);
void compmodel_codecs_free(struct compmodel_codecs *c);
/* 0, or -1 with err set (a compressor failing, out of memory). */
int compmodel_measure(struct compmodel_codecs *c, const void *block, size_t len, struct compmodel_sizes *out,
		      struct dd_err *err);
/* Measures one window of DIST_GRAN_WINDOW bytes into acc ([granularity 1] of dedis-dist(5)): its
 * first 4, 8, .. 128 KiB, each compressed alone by zstd -1, zstd -3 and LZ4, all-zero pieces left
 * out. dedisgen measures the data's windows with it, dedisbench its own content's. 0, or -1 with
 * err set. */
int compmodel_measure_window(struct compmodel_codecs *c, const uint8_t *window, struct dist_gran *acc,
			     struct dd_err *err);
/* The same at another zstd level (dedisgen's granularity curve: zstd -3), LZ4 too when lz4 is
 * true (out->lz4 0 otherwise). */
int compmodel_measure_level(struct compmodel_codecs *c, const void *block, size_t len, int zstd_level, bool lz4,
			    struct compmodel_sizes *out, struct dd_err *err);

#endif
