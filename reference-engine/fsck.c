/* fsck.c - engine_fsck: every invariant, with the volume quiesced: reference words against the
 * map and the index, index entries against the bytes they name, counters against a recount,
 * every live content readable, and the durable map (after a commit) equal to the working map. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reference-engine/engine-int.h"

struct fsck_walk {
	struct engine *e;
	uint32_t *expect;     /* recomputed reference words */
	long problems;
	long durable;         /* of them, damage the durable files or the data show (no cache rebuild hides it) */
	void (*report)(void *, const char *);
	void *arg;
	uint64_t entries;
	int io_error; /* the first read the device failed: the check itself failed */
};

#define durable_problem(w, ...) ((w)->durable++, problem(w, __VA_ARGS__))

__attribute__((format(printf, 2, 3)))
static void problem(struct fsck_walk *w, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	w->problems++;
	if (w->report && w->problems <= 100)
		w->report(w->arg, line);
}

/* Reads a live content for the check: 0, 1 when it cannot be read (damage: a problem), or the
 * device's error when a read of a block its file covers failed (the check cannot go on). */
static int fsck_read(struct fsck_walk *w, uint64_t addr)
{
	struct engine *e = w->e;
	bool packed = addr_packed(addr);
	int rc = store_read(&e->store, addr_pbn(addr), packed ? e->scratch2 : e->scratch);
	if (rc && (rc != -EIO || store_covers(&e->store, addr_pbn(addr)))) {
		w->io_error = rc;
		return rc;
	}
	if (!rc && packed)
		rc = packer_extract(e->sb.block_size, e->scratch2, addr_slot(addr), addr_len(addr), e->scratch);
	return rc ? 1 : 0;
}

static int fsck_entry(void *arg, const uint8_t *fp, uint64_t addr)
{
	struct fsck_walk *w = arg;
	struct engine *e = w->e;
	uint8_t want[FP_MAX_LEN];
	w->entries++;
	if (!space_valid(&e->space, addr)) {
		problem(w, "index entry names no valid address (%#llx)", (unsigned long long)addr);
		return 0;
	}
	uint64_t idx = space_index(&e->space, addr);
	if (w->expect[idx] & REF_INDEXED)
		problem(w, "two index entries name pbn %llu slot %u", (unsigned long long)addr_pbn(addr), addr_slot(addr));
	w->expect[idx] |= REF_INDEXED;
	int r = fsck_read(w, addr);
	if (r < 0)
		return r;
	if (r) {
		durable_problem(w, "pbn %llu slot %u (indexed) cannot be read", (unsigned long long)addr_pbn(addr), addr_slot(addr));
		return 0;
	}
	fp_hash(e->fp, e->scratch, e->sb.block_size, want);
	if (memcmp(want, fp, e->sb.fp_len))
		durable_problem(w, "pbn %llu slot %u does not hold the data its index entry names", (unsigned long long)addr_pbn(addr),
			addr_slot(addr));
	return 0;
}

static void check_counter(struct fsck_walk *w, const char *what, enum vol_counter c, int64_t actual)
{
	int64_t have = vol_counter(w->e, c);
	if (have != actual)
		problem(w, "%s counter %lld, actual %lld", what, (long long)have, (long long)actual);
}

/* After a commit the durable map (checkpoint + journal) must equal the working one. */
static int check_durable(struct fsck_walk *w)
{
	struct engine *e = w->e;
	int rc = txn_commit(&e->txn, false);
	uint64_t *map = rc ? NULL : malloc(e->sb.logical_blocks * 8), next;
	if (!rc && !map)
		rc = -ENOMEM;
	if (!rc && (rc = txn_load(&e->txn, map, &next)) == -EBADMSG) {
		durable_problem(w, "%s", e->txn.why.msg); /* damage found, not a failure of the check */
		free(map);
		return 0;
	}
	uint64_t bad = 0;
	for (uint64_t l = 0; !rc && l < e->sb.logical_blocks; l++)
		if (map[l] != e->lbnmap[l] && bad++ < 5)
			durable_problem(w, "lbn %llu: the durable map says %#llx, the working map %#llx", (unsigned long long)l,
				(unsigned long long)map[l], (unsigned long long)e->lbnmap[l]);
	if (bad > 5)
		durable_problem(w, "%llu more LBNs differ between the durable and the working map", (unsigned long long)(bad - 5));
	free(map);
	return rc;
}

bool engine_fsck_caches_only(const struct engine *e)
{
	return e->fsck_caches_only;
}

long engine_fsck(struct engine *e, void (*report)(void *arg, const char *line), void *arg)
{
	struct space *s = &e->space;
	uint64_t words = s->blocks * s->frags;
	struct fsck_walk w = {e, calloc(words, 4), 0, 0, report, arg, 0, 0};
	if (!w.expect)
		return -ENOMEM;
	int rc = world_enter(e);
	if (rc) {
		free(w.expect);
		return rc;
	}
	int64_t mapped = 0, referenced = 0, bytes = 0, frags = 0;
	for (uint64_t l = 0; l < e->sb.logical_blocks; l++) {
		uint64_t a = e->lbnmap[l];
		if (!a)
			continue;
		mapped++;
		if (!space_valid(s, a)) {
			durable_problem(&w, "lbn %llu maps to no valid address (%#llx)", (unsigned long long)l, (unsigned long long)a);
			continue;
		}
		uint64_t idx = space_index(s, a);
		if (w.expect[idx]++)
			continue;
		referenced++;
		bytes += space_bytes(s, a);
		frags += addr_packed(a);
		int r = fsck_read(&w, a);
		if (r < 0)
			break;
		if (r)
			durable_problem(&w, "lbn %llu: its content (pbn %llu slot %u) cannot be read", (unsigned long long)l,
				(unsigned long long)addr_pbn(a), addr_slot(a));
	}
	rc = w.io_error ? w.io_error : e->iops->iterate(e->ix, fsck_entry, &w);
	if (rc == -EIO && !w.io_error)
		rc = -EBADMSG; /* the index's own files, not the chunk store: a cache that cannot be read */
	for (uint64_t i = 0; !rc && i < words; i++) {
		uint32_t have = s->refs[i], want = w.expect[i];
		if (REF_LBNS(have) != REF_LBNS(want) || (have & REF_INDEXED) != (want & REF_INDEXED))
			problem(&w, "pbn %llu slot %llu: reference word %u/%s, expected %u/%s", (unsigned long long)(i / s->frags),
				(unsigned long long)(i % s->frags), REF_LBNS(have), have & REF_INDEXED ? "indexed" : "unindexed",
				REF_LBNS(want), want & REF_INDEXED ? "indexed" : "unindexed");
		else if (want && !(have & REF_HELD))
			problem(&w, "pbn %llu slot %llu is live but not held (GC could reuse it)", (unsigned long long)(i / s->frags),
				(unsigned long long)(i % s->frags));
	}
	if (!rc) {
		check_counter(&w, "mapped-blocks", VC_MAPPED, mapped);
		check_counter(&w, "referenced-blocks", VC_REFERENCED, referenced);
		check_counter(&w, "physical-bytes", VC_PHYSICAL_BYTES, bytes);
		check_counter(&w, "compressed-fragments", VC_LIVE_FRAGMENTS, frags);
		struct index_stats is;
		e->iops->stats(e->ix, &is);
		if (is.entries != w.entries)
			problem(&w, "index says %llu entries, iteration found %llu", (unsigned long long)is.entries,
				(unsigned long long)w.entries);
		rc = check_durable(&w);
	}
	world_leave(e);
	free(w.expect);
	e->fsck_caches_only = !rc && w.problems && !w.durable;
	return rc ? rc : w.problems;
}
