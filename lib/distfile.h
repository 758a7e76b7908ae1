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

/* [alignment 1]: what a store deduplicating fixed records of k base blocks sees (k = 2 << i, i =
 * 0..DIST_ALIGN_SIZES-1: 8 to 128 KiB records at 4 KiB blocks), and where copies sit relative to
 * their sources modulo DIST_ALIGN_MOD blocks (mod k for k dividing 32: fold, residue r mod k).
 * Records are aligned in their file (a device: from its start) and a file's last record is padded
 * with zero blocks, as a file system's records and shared/tools/granjudge.py's pieces are; an
 * all-zero record counts like any other (one distinct content: a fixed-block store dedups it too).
 * A record's identity is derived from its blocks' fingerprints (nothing is hashed again).
 * records[i]: every record of 2 << i blocks (exact). distinct[i]: the distinct ones, exact at
 * sample_rate 1; past a memory bound only records whose identity hash falls in a 1/2^j share are
 * kept (content-defined: every copy of a record is in or out alike) and distinct[i] is the number
 * kept / sample_rate. The fixed dedup ratio at 2 << i blocks is records[i] / distinct[i].
 * Copy shifts (shift_*): over the blocks [locality 1] analysed, each copied run (a copy_runs
 * stretch: non-zero duplicates, each one block past its predecessor's source) by its (copy
 * position - source position) mod DIST_ALIGN_MOD, in stream positions (a file or a device alone:
 * its own block offsets); runs and the blocks they hold, per residue. A copy with residue 0 mod k
 * can share whole k-block records with its source; any other residue never can. */
#define DIST_ALIGN_SIZES 5
#define DIST_ALIGN_MOD 32
struct dist_align {
	bool present;
	double sample_rate;                     /* p in (0, 1], a power of two's inverse */
	uint64_t records[DIST_ALIGN_SIZES];     /* records of 2 << i blocks */
	uint64_t distinct[DIST_ALIGN_SIZES];    /* distinct records (estimated when p < 1), <= records */
	uint64_t shift_runs[DIST_ALIGN_MOD];    /* copied runs whose (copy - source) mod 32 is r */
	uint64_t shift_blocks[DIST_ALIGN_MOD];  /* the blocks those runs hold (>= runs) */
};

/* [cdc 1]: what a store chunking by content (a backup store: borg, restic, Data Domain) sees. The
 * chunker (gen/cdcchunk.h) is FastCDC's: a gear hash over the last 64 bytes, normalised chunking
 * (the strict mask before `avg` bytes, the loose one after), min = avg / 4, max = avg * 8; its
 * gear table comes from lib/rng with a fixed seed. It runs over the bytes dedisgen reads: a file
 * or a device as one stream (a tar too), a directory file by file, as backup tools chunk files.
 * Large files are read in ranges of `range` bytes by several threads, so a chunk also ends at each
 * range's end (1 cut in range / avg; the chunking resynchronises within a chunk or two).
 * chunks, bytes: every chunk and its bytes (exact). zero_*: the all-zero chunks among them (exact:
 * zeros fill disk images, and one content that heavy would swing a sample), zero_distinct_bytes
 * the bytes of their distinct contents (one per length). The rest is over the *sampled* non-zero
 * chunks: those whose cheap content hash (the gear hash at their end and their length) falls in a
 * sample_rate share; all copies of a chunk are sampled alike (content-defined sampling). A sampled
 * chunk's source is the first occurrence of its content (by stream position); a later one is a
 * duplicate.
 * aligned_*: duplicates whose (position - source position) mod block_size is 0; shifted_*: the
 * others, redundancy a fixed block_size dedup does not see (none of their blocks line up with the
 * source's). runs: maximal stretches of shifted duplicates at one distance from their sources
 * (copy - source position, exact), each chunk starting where the previous one ended, by length
 * in bytes (first chunk's start to last chunk's end), bin k = [2^k, 2^(k+1)); at sample_rate
 * p < 1 up to (1/p - 1) * 2 * avg unsampled bytes may lie between two chunks of a run (their
 * bytes then count in it: Σ run_bytes >= shifted_bytes, = at p 1). shifts: shifted duplicates
 * per exact shift (1 .. block_size - 1), sorted, chunks and bytes.
 * Sums: sampled = distinct + aligned + shifted (chunks and bytes alike). The CDC dedup ratio
 * (dist_cdc_ratio) is bytes / stored, stored = zero_distinct_bytes + (bytes - zero_bytes) *
 * distinct_bytes / sampled_bytes (exact at sample_rate 1); the share fixed dedup misses is
 * shifted_bytes / sampled_bytes of the non-zero bytes. */
#define DIST_CDC_RUN_BINS 48
struct dist_cdc_shift {
	uint32_t shift;         /* (copy - source) mod block_size, 1 .. block_size - 1 */
	uint64_t chunks, bytes; /* shifted duplicate chunks at this shift and their bytes */
};
struct dist_cdc {
	bool present;
	uint32_t avg, min, max;           /* chunker sizes (bytes): avg a power of two, 256 .. 2^24 */
	uint64_t block_size;              /* the fixed dedup the shifts are measured against */
	uint64_t range;                   /* forced cuts at multiples of this in large files (0: none) */
	double sample_rate;               /* p in (0, 1], a power of two's inverse */
	uint64_t chunks, bytes;           /* all chunks (exact) */
	uint64_t zero_chunks, zero_bytes;         /* all-zero chunks (exact, not sampled) */
	uint64_t zero_distinct_bytes;             /* their distinct contents' bytes */
	uint64_t sampled_chunks, sampled_bytes;   /* the sampled non-zero ones */
	uint64_t distinct_chunks, distinct_bytes; /* distinct sampled contents */
	uint64_t aligned_chunks, aligned_bytes;   /* sampled duplicates with shift 0 */
	uint64_t shifted_chunks, shifted_bytes;   /* sampled duplicates with shift != 0 */
	uint64_t run_count[DIST_CDC_RUN_BINS];    /* runs of shifted duplicates, by bytes */
	uint64_t run_bytes[DIST_CDC_RUN_BINS];
	struct dist_cdc_shift *shifts;    /* sorted by shift, no repeats; Σ = shifted_* */
	size_t nshifts;
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
	struct dist_align align;       /* [alignment 1], when present */
	struct dist_cdc cdc;           /* [cdc 1], when present (owns shifts) */
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
/* [cdc 1]'s dedup ratio (see struct dist_cdc); 0 when it holds no chunk. */
double dist_cdc_ratio(const struct dist_cdc *c);
void dist_free(struct dist *d);

#endif
