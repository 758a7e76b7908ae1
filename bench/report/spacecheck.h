/* spacecheck.h - the target's space in use before and after a run, from the source that knows it, and
 * the run's observed space against what an ideal dedup (+ compression) store would keep. */
#ifndef DEDIS_BENCH_SPACE_H
#define DEDIS_BENCH_SPACE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bench_config;
struct run_result;
struct target;
struct dd_err;

/* statfs: the file system holding a directory or file target (used = blocks - free);
 * zram: /sys/block/zramN/mm_stat's mem_used_total; engine: the volume's physical_bytes counter;
 * command: --space-cmd's output, a byte count. */
enum space_source { SPACE_NONE, SPACE_STATFS, SPACE_ZRAM, SPACE_ENGINE, SPACE_COMMAND };
extern const char *const space_source_names[];

/* zram's mm_stat, the fields a reader wants (bytes). */
struct zram_mm_stat {
	uint64_t orig_data_size, compr_data_size, mem_used_total, same_pages;
};

struct space_reading {
	uint64_t used;            /* the source's used bytes */
	uint64_t allocated;       /* statfs: the worker files' allocated blocks (st_blocks) */
	struct zram_mm_stat zram; /* zram: the whole mm_stat */
};

struct space_probe {
	enum space_source source;
	char path[PATH_MAX];      /* statfs: the target; zram: its mm_stat file */
	char fstype[32];          /* statfs: the file system's type and options (/proc/self/mountinfo, */
	char fsoptions[512];      /* mount and super options joined), "" when unknown */
	const char *cmd;          /* command: --space-cmd */
	struct space_reading before;
};

/* What a run's space accounting found (run_result.space). */
struct space_report {
	bool have;
	enum space_source source;
	uint64_t logical_bytes;   /* live blocks x block size: what the run left on the target */
	uint64_t expected_bytes;  /* what an ideal store keeps of it (basis says which ideal) */
	const char *basis;        /* "dedup", "dedup+zstd-1" (compressible content), "engine"; record:
	                           * "record-dedup", "record-dedup+zstd-3"; cdc: "cdc-dedup", "cdc-dedup+lz4" */
	const char *model;        /* the ideal's kind: "block", "record", "cdc", "engine" */
	char model_reason[160];   /* why that kind (the file system, --space-model, a fallback) */
	uint64_t observed_bytes;  /* after - before (engine: its physical_bytes) */
	double efficiency;        /* expected / observed: 1 = as little as the ideal; 0 if nothing observed */
	struct space_reading before, after;
	char detail[PATH_MAX + 64]; /* the device, file system or command measured */
};

/* Which source measures this target (cmd: --space-cmd, or NULL). */
enum space_source space_source_of(const struct target *t, const char *cmd);

/* Before anything is written: pick the source and take the first reading. 0, or -1 with a
 * one-line reason (a --space-cmd that fails or prints no byte count: bad input). */
int space_begin(const struct bench_config *c, struct space_probe *p, struct dd_err *err);
/* The same for any prepared target (cmd: --space-cmd or NULL): the source and the first reading
 * in p->before. 0, or -1 with a reason. */
int space_probe_init(struct space_probe *p, const struct target *t, const char *cmd, struct dd_err *err);
/* A reading now, the target's written data flushed first. 0, or -1 with a reason. */
int space_probe_read(const struct space_probe *p, const struct target *t, struct space_reading *out, struct dd_err *err);
/* After the run (its data flushed first): the second reading and the report in r->space, from
 * r's live contents and physical estimate. 0, or -1 with a reason (r->space.have stays false). */
int space_end(const struct bench_config *c, struct space_probe *p, struct run_result *r, struct dd_err *err);

/* Parsers, exposed for the unit tests. mm_stat's first line; a command's output (a decimal byte
 * count first on its first line, anything after a blank ignored). 0, or -1. */
int space_parse_mm_stat(const char *text, struct zram_mm_stat *out);
int space_parse_bytes(const char *text, uint64_t *out);
/* The mount holding an absolute, resolved path in /proc/self/mountinfo's text (the longest mount
 * point above it, the last mounted of equals): its type and its mount and super options joined
 * by a comma. 0, or -1 (no line holds it). */
int space_parse_mountinfo(const char *text, const char *path, char *fstype, size_t typelen, char *options,
			  size_t optlen);
/* btrfs's forced compression in mount options: "zstd", "zstd:3", ... ("" when not forced). */
void space_forced_compression(const char *options, char *out, size_t len);

#endif
