/* tally.c - the id-count map, the access-count frequencies and their merge: the data behind
 * the summary's "written" rows and the hottest-10 % share. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/fullio.h"
#include "lib/u64map.h"
#include "bench/report/tally.h"

int idc_init(struct id_counts *m, size_t cap_hint)
{
	m->unique = 0;
	return u64map_init(&m->map, cap_hint);
}

void idc_free(struct id_counts *m)
{
	u64map_free(&m->map);
	m->unique = 0;
}

int idc_add(struct id_counts *m, uint64_t id, uint64_t n)
{
	uint64_t *count = u64map_at(&m->map, id);
	if (!count)
		return -1;
	*count += n;
	return 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct dist_row *x = a, *y = b;
	return (x->dups > y->dups) - (x->dups < y->dups);
}

bool idc_next(const struct id_counts *m, size_t *slot, uint64_t *id, uint64_t *count)
{
	return u64map_next(&m->map, slot, id, count);
}

int idc_to_dist(const struct id_counts *m, struct dist *out)
{
	/* Collect (dups, 1) per id, sort, and fold equal dups into one row. */
	size_t n = m->map.used + 1, k = 0, slot = 0;
	uint64_t id, count;
	struct dist_row *rows = malloc(n * sizeof *rows);
	if (!rows)
		return -1;
	if (m->unique)
		rows[k++] = (struct dist_row){0, m->unique};
	while (u64map_next(&m->map, &slot, &id, &count))
		rows[k++] = (struct dist_row){count - 1, 1};
	qsort(rows, k, sizeof *rows, cmp_row);
	size_t w = 0;
	for (size_t i = 0; i < k; i++) {
		if (w && rows[w - 1].dups == rows[i].dups)
			rows[w - 1].blocks += rows[i].blocks;
		else
			rows[w++] = rows[i];
	}
	memset(out, 0, sizeof *out);
	out->rows = rows;
	out->nrows = w;
	return 0;
}

int afreq_add(struct access_freq *f, uint64_t count, uint64_t blocks)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		uint64_t *c = realloc(f->count, cap * sizeof *c);
		if (!c)
			return -1;
		f->count = c;
		uint64_t *b = realloc(f->blocks, cap * sizeof *b);
		if (!b)
			return -1;
		f->blocks = b;
		f->cap = cap;
	}
	f->count[f->n] = count;
	f->blocks[f->n] = blocks;
	f->n++;
	return 0;
}

int afreq_from_counts(struct access_freq *f, const uint32_t *per_block, uint64_t nblocks)
{
	/* Most blocks share a handful of counts: a small direct table catches them, the rest go
	 * through afreq_add. */
	uint64_t small[256] = {0};
	for (uint64_t b = 0; b < nblocks; b++) {
		uint32_t c = per_block[b];
		if (c < 256)
			small[c]++;
		else if (afreq_add(f, c, 1))
			return -1;
	}
	for (unsigned c = 0; c < 256; c++)
		if (small[c] && afreq_add(f, c, small[c]))
			return -1;
	return 0;
}

struct count_blocks {
	uint64_t count, blocks;
};

static int by_count_desc(const void *a, const void *b)
{
	const struct count_blocks *x = a, *y = b;
	return (x->count < y->count) - (x->count > y->count);
}

double afreq_hottest_share(const struct access_freq *f, double fraction)
{
	uint64_t total_blocks = 0, total_ops = 0;
	struct count_blocks *v = malloc((f->n ? f->n : 1) * sizeof *v);
	if (!v)
		return 0;
	for (size_t i = 0; i < f->n; i++) {
		v[i] = (struct count_blocks){f->count[i], f->blocks[i]};
		total_blocks += f->blocks[i];
		total_ops += f->count[i] * f->blocks[i];
	}
	qsort(v, f->n, sizeof *v, by_count_desc);
	uint64_t want = (uint64_t)((double)total_blocks * fraction + 0.5), taken = 0, ops = 0;
	for (size_t i = 0; i < f->n && taken < want; i++) {
		uint64_t take = v[i].blocks < want - taken ? v[i].blocks : want - taken;
		taken += take;
		ops += take * v[i].count;
	}
	free(v);
	return total_ops ? (double)ops / (double)total_ops : 0;
}

static int by_count_asc(const void *a, const void *b)
{
	const struct count_blocks *x = a, *y = b;
	return (x->count > y->count) - (x->count < y->count);
}

int afreq_sort(struct access_freq *f)
{
	struct count_blocks *v = malloc((f->n ? f->n : 1) * sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < f->n; i++)
		v[i] = (struct count_blocks){f->count[i], f->blocks[i]};
	qsort(v, f->n, sizeof *v, by_count_asc);
	size_t w = 0;
	for (size_t i = 0; i < f->n; i++) {
		if (w && v[w - 1].count == v[i].count)
			v[w - 1].blocks += v[i].blocks;
		else
			v[w++] = v[i];
	}
	for (size_t i = 0; i < w; i++) {
		f->count[i] = v[i].count;
		f->blocks[i] = v[i].blocks;
	}
	f->n = w;
	free(v);
	return 0;
}

void afreq_free(struct access_freq *f)
{
	free(f->count);
	free(f->blocks);
	memset(f, 0, sizeof *f);
}

#define TALLY_MAGIC 0x594c4c4154ULL /* "TALLY" */

int tally_write(int fd, const struct id_counts *ids, const struct access_freq *af)
{
	uint64_t head[4] = {TALLY_MAGIC, ids->unique, ids->map.used, af->n};
	if (fullio_write(fd, head, sizeof head))
		return -1;
	uint64_t buf[512];
	size_t k = 0, slot = 0;
	while (u64map_next(&ids->map, &slot, &buf[k], &buf[k + 1])) {
		k += 2;
		if (k == 512) {
			if (fullio_write(fd, buf, sizeof buf))
				return -1;
			k = 0;
		}
	}
	if (k && fullio_write(fd, buf, k * sizeof *buf))
		return -1;
	for (size_t i = 0; i < af->n; i++) {
		uint64_t pair[2] = {af->count[i], af->blocks[i]};
		if (fullio_write(fd, pair, sizeof pair))
			return -1;
	}
	return 0;
}

int tally_read_merge(int fd, struct id_counts *ids, struct access_freq *af)
{
	uint64_t head[4];
	if (fullio_read(fd, head, sizeof head) || head[0] != TALLY_MAGIC)
		return -1;
	ids->unique += head[1];
	/* Grow once up front rather than repeatedly while merging. */
	while ((ids->map.used + head[2]) * 4 > ids->map.cap * 3)
		if (u64map_grow(&ids->map))
			return -1;
	uint64_t buf[512];
	for (uint64_t left = head[2]; left;) {
		uint64_t n = left < 256 ? left : 256;
		if (fullio_read(fd, buf, n * 2 * sizeof *buf))
			return -1;
		for (uint64_t i = 0; i < n; i++)
			if (idc_add(ids, buf[2 * i], buf[2 * i + 1]))
				return -1;
		left -= n;
	}
	for (uint64_t i = 0; i < head[3]; i++) {
		uint64_t pair[2];
		if (fullio_read(fd, pair, sizeof pair) || afreq_add(af, pair[0], pair[1]))
			return -1;
	}
	return 0;
}
