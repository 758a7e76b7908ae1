/* physical.h - what ideal deduplicating, compressing stores keep of the data a run leaves: per block
 * (each distinct content once, compressed alone) and per 128 KiB record (ZFS, btrfs extents). */
#ifndef DEDIS_BENCH_PHYSICAL_H
#define DEDIS_BENCH_PHYSICAL_H

#include <stdint.h>
#include "bench/config.h"
#include "bench/report/tally.h"
#include "lib/distfile.h"
#include "lib/u64map.h"

/* Contents measured at most: the estimate's relative error is about the spread of per-block
 * sizes (coefficient of variation ~1) over the square root of this, ~1.5 %. */
#define PHYSICAL_SAMPLE 4096

/* A record store (ZFS recordsize=128K, btrfs's 128 KiB compressed extents): the target cut into
 * records aligned in each file, a record deduplicated whole (its identity: the tuple of its
 * blocks' content ids) and compressed alone with zstd -3; all-zero records are holes. */
#define PHYSICAL_RECORD 131072u
#define PHYSICAL_SECTOR 4096u            /* ZFS ashift=12: allocations round up to it */
/* Distinct record identities held at most: above, identities are kept by hash with probability
 * PHYSICAL_RECORD_SAMPLE / records and the count scaled (sample_rate < 1 says so). */
#define PHYSICAL_RECORD_SAMPLE (1u << 20)

struct record_estimate {
	bool have;                /* the block size divides a record */
	uint64_t records;         /* records the target's blocks make (a file's last may be short) */
	uint64_t zero_records;    /* of them all zero (written zero or never written): holes */
	double distinct;          /* distinct non-zero records (estimated when sample_rate < 1) */
	double sample_rate;       /* share of identities held: 1, or less on a huge target */
	/* zstd -3 of a 128 KiB record, from the distribution's [granularity 1] (the dataset's own
	 * records) when the run's content follows the distribution; else why_no_zstd3 says why. */
	bool have_zstd3;
	const char *why_no_zstd3;
	double zstd3_ratio;       /* the dataset's 128 KiB bytes / their zstd -3 sizes */
	double alloc_per_record;  /* ZFS-like: stored raw when it saves < 1/8, else the mean compressed
	                           * size + half a sector (rounding each up to 4 KiB), from the mean */
	double alloc_bytes;       /* every non-zero record (a store without dedup: btrfs, ZFS dedup=off) */
	double dedup_alloc_bytes; /* distinct non-zero records (ZFS dedup=on): the record store's ideal */
};

/* Building a record_estimate from the ledger, region by region. */
struct record_tally {
	struct record_estimate *out;
	uint32_t per_record;      /* blocks per record */
	uint64_t keep_below;      /* an identity is held when its hash is at most this */
	struct u64map seen;
	bool open, nonzero;       /* the record being read, and whether a block of it is not zero */
	uint64_t record, hash;
	uint32_t filled;
};

/* block_size: the run's; max_records: at most how many records the regions make (sizes the
 * sample). 0, or -1 (memory). A block size that does not divide a record: out->have stays false
 * and add/end do nothing. */
int record_tally_init(struct record_tally *t, uint32_t block_size, uint64_t max_records, struct record_estimate *out);
/* n ledger words (id + 1, 0 never written) of blocks first_block.. of one file; same_file: they
 * continue the blocks of the previous call's file (a record may span both). */
int record_tally_add(struct record_tally *t, const uint64_t *words, uint64_t n, uint64_t first_block, bool same_file);
/* The last record closed, distinct counted, the map freed. 0, or -1 (memory). */
int record_tally_end(struct record_tally *t);
/* The sizes from the dataset's granularity curve: g NULL (or not present) leaves have_zstd3
 * false with why (NULL: "no [granularity 1] in the distribution"). */
void record_sizes(struct record_estimate *out, const struct dist_gran *g, const char *why);

/* A content-defined chunk store (backup stores: borg, restic, Data Domain's ~8 KiB segments): the
 * dataset's CDC dedup ratio ([cdc 1]: FastCDC-style chunks, avg bytes on average) applied to the
 * run's logical bytes, so the expectation is what the dataset's chunks share, not the replica's;
 * LZ4 (borg's default) from [granularity 1] at the piece size equal to the average chunk (an
 * approximation: chunks run from avg / 4 to avg * 8). */
struct cdc_estimate {
	bool have;                /* the distribution has [cdc 1] with chunks measured */
	const char *why_not;      /* else why */
	uint32_t avg;             /* the chunker's average chunk (bytes) */
	double dedup_ratio;       /* the dataset's (dist_cdc_ratio: bytes / bytes stored) */
	double shifted_share;     /* of its bytes, shifted duplicates: what fixed-block dedup misses */
	double dedup_bytes;       /* the run's logical bytes / dedup_ratio */
	bool have_lz4;            /* [granularity 1] has pieces of avg bytes */
	double lz4_ratio, lz4_bytes;
};

struct physical_estimate {
	uint64_t distinct;     /* live distinct contents, the zero block left out (stores keep none) */
	uint64_t sampled;      /* of them compressed (all when there are at most PHYSICAL_SAMPLE) */
	double zstd_bytes;     /* Σ over distinct contents of the size alone under zstd -1 (estimated) */
	double lz4_bytes;      /* the same under LZ4 */
	struct record_estimate record; /* the same data in a 128 KiB record store */
	struct cdc_estimate cdc;       /* ... and in a content-defined chunk store */
};

/* The CDC store's sizes for logical bytes of the run (cdc_estimate); cdc NULL or not present:
 * have false and why_not "no [cdc 1] in the distribution". */
void cdc_sizes(struct cdc_estimate *out, const struct dist_cdc *cdc, const struct dist_gran *g, double logical_bytes);

/* words: the shared ledger (id + 1 per block, 0 = never written), n blocks of it; dups: the live
 * duplicated-or-not ids of the layout counted from it (unique ids are found in the ledger). Every
 * content is rebuilt exactly as the workers wrote it (config_fill_content). The record store's
 * figures follow from the ledger's tuples (records aligned in each worker file). 0, or -1
 * (memory or a compressor failing). */
int physical_estimate(const struct bench_config *c, const uint64_t *words, uint64_t n, const struct id_counts *dups,
		      struct physical_estimate *out);

/* What the reference engine must store for the live data (same arguments): every distinct
 * content once (the zero block too: the engine stores it like any block), a whole block on an
 * uncompressed volume; with lz4, its LZ4 size plus the fragment's 4-byte header when that is at
 * most 7/8 of a block, else a whole block (the packer's rule, doc/notes/dedisengine.md). Exact: every
 * content is rebuilt and compressed. 0, or -1 (memory). */
int physical_engine_bytes(const struct bench_config *c, const uint64_t *words, uint64_t n,
			  const struct id_counts *dups, bool lz4, uint64_t *bytes);
/* The same rule for one block of bs bytes on an lz4 volume (scratch: LZ4_compressBound(bs) bytes,
 * cap of them): what replay checks its trace's contents against. */
uint64_t physical_engine_block_bytes(const void *block, uint32_t bs, char *scratch, int cap);

#endif
