/* distfile.h - the duplicate-distribution format (dedis-dist(5)): load, validate, save, and the
 * derived figures (T, U0, U1, D, dedup ratio) every tool reports. */
#ifndef DEDIS_DISTFILE_H
#define DEDIS_DISTFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include "lib/errmsg.h"

/* `blocks` distinct contents, each stored `dups + 1` times. */
struct dist_row {
	uint64_t dups;
	uint64_t blocks;
};

/* What a dedup + compression store sees beyond duplicates: the optional, versioned sections of
 * dedis-dist(5). A reader that predates a section rejects the file at its "[name version]" line
 * (not a record) rather than misreading it; this reader rejects unknown names and newer versions.
 *
 * [compressibility 1]: each distinct content's size compressed alone with zstd -1 and LZ4 (block
 * API), joint with its copy class. Class k holds contents stored 2^k .. 2^(k+1)-1 times (0: once);
 * the zero block is not listed (it is "# zero-blocks:"). Sizes are binned in 1/32 of the block
 * (bucket = floor(size * 32 / block), 31 also holds sizes >= the block) and each cell keeps its
 * mean sizes in 1/2^20 of the block, at least 1 (version 1 kept 1/1024: a content compressing to
 * 27 bytes of 64 KiB rounded to 0 and its ratio was lost; it is read scaled, a 0 as 1/4096). Counts are estimates: contents are measured when one of
 * their occurrences is selected, each with probability `sample_rate` (a hash of fingerprint and
 * position: deterministic), so a content stored c times is measured with probability
 * 1 - (1 - p)^c and weighted by its inverse (Horvitz-Thompson: unbiased per class). */
#define DIST_COMP_BUCKETS 32
#define DIST_COMP_UNIT (1u << 20)
#define DIST_CLASSES 64
struct dist_comp_cell {
	uint8_t cls;              /* copy class */
	uint8_t zstd_bucket;      /* 0..31 */
	uint8_t lz4_bucket;       /* 0..31 */
	uint64_t contents;        /* estimated distinct contents (weights applied), > 0 */
	uint32_t zstd_mean;       /* mean size, 1/2^20 of the block, 1..2^20 */
	uint32_t lz4_mean;
};
struct dist_comp {
	bool present;
	double sample_rate;                 /* p in (0, 1] */
	uint64_t measured;                  /* contents compressed, all classes */
	uint64_t class_measured[DIST_CLASSES]; /* contents compressed, per class */
	struct dist_comp_cell *cells;       /* sorted by (cls, zstd_bucket, lz4_bucket), no repeats */
	size_t ncells;
};

/* [locality 1]: the order of duplicates in the stream analysed (files concatenated in walk order,
 * each starting on a block boundary, as dedisgen reads them; a device in block order). Block i's
 * source is the first position of its content; i is a duplicate when its source is earlier. Length
 * histograms bin lengths in [2^k, 2^(k+1)) and keep, per bin, how many stretches and how many
 * blocks they hold (so the mean length per bin is exact). */
#define DIST_LEN_BINS 48
struct dist_len_hist {
	uint64_t count[DIST_LEN_BINS];
	uint64_t blocks[DIST_LEN_BINS];
};
struct dist_locality {
	bool present;
	uint64_t analysed;        /* blocks whose order was analysed */
	uint64_t window;          /* 0: the whole stream in one piece; else windows of this many
	                           * blocks, chosen by hash of their number (runs end at their edges) */
	uint64_t duplicates;      /* duplicate blocks analysed */
	uint64_t sequential;      /* duplicates whose predecessor is a duplicate with source one less
	                           * (shared/tools/blockcomp.py's "continue a sequential source") */
	struct dist_len_hist new_runs;  /* maximal stretches of first occurrences */
	struct dist_len_hist dup_runs;  /* maximal stretches of duplicates */
	struct dist_len_hist copy_runs; /* maximal stretches of non-zero duplicates, each with source
	                                 * one more than its predecessor's: a copied sequence */
	struct dist_len_hist zero_runs; /* maximal stretches of duplicates of the zero block */
};

/* [granularity 1]: how compressibility grows with the piece a store compresses. 128 KiB windows of
 * the data analysed, aligned in their file (a device: from its start; a file's last window
 * zero-padded), are selected with probability `sample_rate` (a hash of their stream position:
 * deterministic); of each, the first DIST_GRAN_MIN << k bytes (k = 0..5: 4 to 128 KiB) are
 * compressed alone with zstd -1, zstd -3 and LZ4 (block API; a piece that grows counts as stored
 * raw). All-zero pieces are left out, as ZFS and btrfs leave holes out. Sums of bytes, so
 * threads' samples add up exactly; the ratio at a size is bytes / compressed bytes. */
#define DIST_GRAN_SIZES 6
#define DIST_GRAN_MIN 4096u
#define DIST_GRAN_WINDOW (DIST_GRAN_MIN << (DIST_GRAN_SIZES - 1))
struct dist_gran {
	bool present;
	double sample_rate;                 /* p in (0, 1] */
	uint64_t windows;                   /* windows measured (all-zero ones included) */
	uint64_t bytes[DIST_GRAN_SIZES];    /* bytes of the non-zero pieces measured, per size */
	uint64_t zstd1[DIST_GRAN_SIZES];    /* their compressed sizes, summed, per codec */
	uint64_t zstd3[DIST_GRAN_SIZES];
	uint64_t lz4[DIST_GRAN_SIZES];
};

struct dist {
	struct dist_row *rows; /* sorted by dups ascending, no two rows with the same dups */
	size_t nrows;
	/* From header comments when present (0 / "" when absent). */
	uint64_t zero_blocks;  /* "# zero-blocks: N" */
	uint64_t block_size;   /* "# block-size: N" */
	char hash[16];         /* "# hash: sha1" */
	/* Original DEDISbench files only (see dist_load): how many records repeated an earlier
	 * dups value and were added to it (bundled kernels.dist holds its table twice). Tools
	 * should warn when this is not 0. Always 0 for files with any '#' comment. */
	size_t merged_rows;
	struct dist_comp comp;         /* [compressibility 1], when present */
	struct dist_locality locality; /* [locality 1], when present */
	struct dist_gran gran;         /* [granularity 1], when present */
};

/* The derived figures of DESIGN.md; shares are fractions in [0,1]. */
struct dist_rows {
	uint64_t total_blocks;    /* T = sum blocks*(dups+1) */
	uint64_t distinct;        /* sum blocks */
	uint64_t unique_blocks;   /* blocks of the dups=0 row */
	uint64_t first_copies;    /* sum over dups>0 of blocks */
	uint64_t redundant;       /* sum blocks*dups */
	double u0, u1, d, ratio;  /* unique/T, first_copies/T, redundant/T, T/distinct */
};

/* A failed load's struct dd_err (lib/errmsg.h): "FILE:LINE: reason" in msg; resource when the
 * machine, not the file, failed (memory or descriptors ran out: a run's failure, not bad input). */

/* The largest distribution file read: the biggest real ones are a few KiB (one line per copy
 * count); a larger file is refused (a disk image, /dev/zero's like), never read whole. */
#define DIST_FILE_MAX (64u << 20)

/* Load a file (original DEDISbench files load unchanged: no comments, any order).
 * Records are "<dups> <blocks>" separated by spaces/tabs; blank lines are ignored; '#' starts a
 * comment (whole line or trailing); LF or CRLF line ends; the last newline is optional.
 * Errors (returns -1, fills err): unreadable file; not a regular file (a FIFO is not waited on);
 * over DIST_FILE_MAX (its first NUL or control character named when it has one); a line that is not two unsigned decimal
 * integers (signs, fractions, hex, junk, one or three fields); a value, a row product
 * blocks*(dups+1), T or the sum of blocks that overflows 64 bits; the same dups value twice;
 * blocks = 0; an empty or all-comment file (reported at the last line, line 1 when empty);
 * a malformed recognised header ("# zero-blocks: x", "# block-size: 0", a bad hash name);
 * a NUL byte, a lone CR or another control character.
 * Repeated dups values: an error in any file that contains a '#' or a section (dedis format); in
 * a file without either (an original DEDISbench file) they add up, as DEDISbench itself counted
 * them, and out->merged_rows says how many records were merged.
 * After the records, the optional sections "[compressibility 1]", "[locality 1]" and
 * "[granularity 1]" (each at most once, in that order) fill out->comp / locality / gran; an
 * unknown section name, a newer version, a repeated or misplaced section, a record after a
 * section, an unknown or repeated keyword, a missing or extra field and any value or sum that
 * dedis-dist(5) rules out are errors.
 * On success returns 0 and *out owns its rows and cells (dist_free). On failure *out is zeroed. */
int dist_load(const char *path, struct dist *out, struct dd_err *err);
/* Same, from a memory buffer; `name` is used in error messages. */
int dist_parse(const char *text, size_t len, const char *name, struct dist *out, struct dd_err *err);

/* Build from rows in any order; merges nothing: duplicate dups, blocks = 0 and overflow are
 * errors (err->msg "rows:INDEX: reason", INDEX 1-based). */
int dist_from_rows(const struct dist_row *rows, size_t n, struct dist *out, struct dd_err *err);

/* Write: the given header lines (each written as "# <line>"; the caller passes e.g.
 * "block-size: 4096" — the struct's header fields are not written on their own), then
 * "dups blocks" sorted, then the sections present (comp, locality, gran), exactly as dist_parse reads
 * them back. Returns 0, or -1 on a write error (or EINVAL: a header with a newline, or a section
 * that dist_sections_check refuses: nothing is written then). */
int dist_write(FILE *f, const struct dist *d, const char *const *header_lines, size_t nheader);

/* The checks dist_parse applies to a whole section, on the structs (for writers): ranges, order,
 * Σ measured = MEASURED, every class with cells measured and vice versa, a class's contents >=
 * its measured (= with sample 1), the locality and the granularity sums of dedis-dist(5).
 * Returns 0, or -1 with err->msg "[SECTION 1]: reason" (err may be NULL). */
int dist_sections_check(const struct dist *d, struct dd_err *err);

void dist_compute_rows(const struct dist *d, struct dist_rows *r);
void dist_free(struct dist *d);

#endif
