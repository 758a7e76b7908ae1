/* alignstats.c - records of 2..32 blocks: identities combined pairwise from the blocks' (a record
 * of 2k blocks is its two k-block halves), kept in arrays that are compacted and, if need be,
 * sampled by identity; distinct ones counted by sorting. */
#include <stdlib.h>
#include <string.h>
#include "lib/reserve.h"
#include "lib/rng.h"
#include "gen/alignstats.h"

#define GROUP (2u << (DIST_ALIGN_SIZES - 1)) /* 32 blocks: one record of the largest size */

struct align_set {
	unsigned level;                       /* identities kept: low `level` bits zero */
	uint64_t records[DIST_ALIGN_SIZES];   /* every record seen (exact) */
	uint64_t *ids[DIST_ALIGN_SIZES];      /* kept identities, repeats included until compacted */
	size_t n[DIST_ALIGN_SIZES], cap[DIST_ALIGN_SIZES];
};

uint64_t align_block_id(const uint8_t *fp)
{
	uint64_t id;
	memcpy(&id, fp, sizeof id);
	return id;
}

uint64_t align_pair_id(uint64_t first, uint64_t second)
{
	return rng_mix64(first + rng_mix64(second ^ UINT64_C(0x2545f4914f6cdd1d)));
}

struct align_set *align_set_new(void)
{
	return calloc(1, sizeof(struct align_set));
}

void align_set_free(struct align_set *s)
{
	if (!s)
		return;
	for (int i = 0; i < DIST_ALIGN_SIZES; i++)
		free(s->ids[i]);
	free(s);
}

static inline bool kept(unsigned level, uint64_t id)
{
	return (id & ((UINT64_C(1) << level) - 1)) == 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Sorts a size's identities and drops repeats and those the level no longer keeps. */
static void compact(struct align_set *s, int i)
{
	size_t out = 0;
	if (s->n[i])
		qsort(s->ids[i], s->n[i], sizeof *s->ids[i], cmp_u64);
	for (size_t k = 0; k < s->n[i]; k++)
		if (kept(s->level, s->ids[i][k]) && (!out || s->ids[i][out - 1] != s->ids[i][k]))
			s->ids[i][out++] = s->ids[i][k];
	s->n[i] = out;
}

/* Room for one more identity of size i: compacted at ALIGN_KEEP, the level raised (every size)
 * while that leaves more than half. */
static int make_room(struct align_set *s, int i)
{
	if (s->n[i] >= ALIGN_KEEP) {
		compact(s, i);
		while (s->n[i] > ALIGN_KEEP / 2 && s->level < 63) {
			s->level++;
			for (int j = 0; j < DIST_ALIGN_SIZES; j++)
				compact(s, j);
		}
	}
	return s->n[i] < s->cap[i] ? 0 : array_reserve((void **)&s->ids[i], &s->cap[i], s->n[i] + 1, sizeof(uint64_t), 4096);
}

static int keep(struct align_set *s, int i, uint64_t id)
{
	s->records[i]++;
	if (!kept(s->level, id))
		return 0;
	if (s->n[i] == s->cap[i] || s->n[i] >= ALIGN_KEEP)
		if (make_room(s, i))
			return -1;
	if (kept(s->level, id))
		s->ids[i][s->n[i]++] = id;
	return 0;
}

/* One group of up to 32 blocks (`have` real ones, the rest zero blocks): its records of each size
 * that hold at least one real block. */
static int add_group(struct align_set *s, uint64_t *id, size_t have)
{
	for (int i = 0; i < DIST_ALIGN_SIZES; i++) {
		size_t k = (size_t)2 << i, records = GROUP / k;
		for (size_t r = 0; r < records; r++) {
			id[r] = align_pair_id(id[2 * r], id[2 * r + 1]);
			if (r * k < have && keep(s, i, id[r]))
				return -1;
		}
	}
	return 0;
}

int align_set_add(struct align_set *s, const uint8_t *fps, size_t fl, size_t n, uint64_t first_index,
		  uint64_t zero_id)
{
	uint64_t id[GROUP];
	size_t k = (size_t)((GROUP - first_index % GROUP) % GROUP);
	for (; k < n; k += GROUP) {
		size_t have = n - k < GROUP ? n - k : GROUP;
		for (size_t b = 0; b < GROUP; b++)
			id[b] = b < have ? align_block_id(fps + (k + b) * fl) : zero_id;
		if (add_group(s, id, have))
			return -1;
	}
	return 0;
}

int align_set_merge(struct align_set *into, struct align_set *from)
{
	if (from->level > into->level) {
		into->level = from->level;
		for (int i = 0; i < DIST_ALIGN_SIZES; i++)
			compact(into, i);
	}
	for (int i = 0; i < DIST_ALIGN_SIZES; i++) {
		into->records[i] += from->records[i];
		for (size_t k = 0; k < from->n[i]; k++)
			if (kept(into->level, from->ids[i][k])) {
				if ((into->n[i] == into->cap[i] || into->n[i] >= ALIGN_KEEP) && make_room(into, i))
					return -1;
				if (kept(into->level, from->ids[i][k]))
					into->ids[i][into->n[i]++] = from->ids[i][k];
			}
		free(from->ids[i]);
		from->ids[i] = NULL;
		from->n[i] = from->cap[i] = 0;
		from->records[i] = 0;
	}
	return 0;
}

int align_set_result(struct align_set *s, struct dist_align *out)
{
	out->present = true;
	out->sample_rate = 1.0 / (double)(UINT64_C(1) << s->level);
	for (int i = 0; i < DIST_ALIGN_SIZES; i++) {
		compact(s, i);
		out->records[i] = s->records[i];
		out->distinct[i] = (uint64_t)s->n[i] << s->level;
		if (out->distinct[i] > out->records[i])
			out->distinct[i] = out->records[i];
		if (!out->distinct[i] && out->records[i])
			out->distinct[i] = 1;
	}
	return 0;
}
