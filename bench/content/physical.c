/* physical.c - rebuild a hashed sample of the live distinct contents, compress each alone with
 * zstd -1 and LZ4, and scale to all of them; count the ledger's distinct 128 KiB records; apply
 * the dataset's content-defined chunking to the run's bytes. */
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include "lib/compmodel.h"
#include "lib/content.h"
#include "bench/content/physical.h"
#include "lib/rng.h"
#include "bench/target/target.h"

/* Every live distinct content, rebuilt as the workers wrote it, handed to a visitor. */
struct walk {
	const struct bench_config *c;
	struct content_gen gen;
	struct dupgen g;
	void *buf;
	bool (*wants)(struct walk *w, uint64_t id);
	int (*visit)(struct walk *w, uint64_t id);
	void *arg;
};

static int walk_live(struct walk *w, const uint64_t *words, uint64_t n, const struct id_counts *dups)
{
	const struct bench_config *c = w->c;
	int rc = -1;
	if (c->scaled)
		dupgen_init_scaled(&w->g, &c->layout, 0);
	else
		dupgen_init(&w->g, &c->dup, 0);
	w->buf = aligned_alloc(64, c->o.block_size);
	if (!w->buf || config_content_init(c, &w->gen, c->seed))
		goto out;
	size_t slot = 0;
	uint64_t id, count;
	while (idc_next(dups, &slot, &id, &count)) {
		if (!w->wants(w, id))
			continue;
		config_fill_content(c, &w->gen, &w->g, id, w->buf);
		if (w->visit(w, id))
			goto out;
	}
	for (uint64_t b = 0; b < n; b++) { /* unique ids live on one block each */
		if (!words[b] || !((words[b] - 1) & CONTENT_UNIQUE_BIT) || !w->wants(w, words[b] - 1))
			continue;
		config_fill_content(c, &w->gen, &w->g, words[b] - 1, w->buf);
		if (w->visit(w, words[b] - 1))
			goto out;
	}
	rc = 0;
out:
	free(w->buf);
	return rc;
}

/* ---- the record store: records by their tuple of content ids ---- */

int record_tally_init(struct record_tally *t, uint32_t block_size, uint64_t max_records, struct record_estimate *out)
{
	memset(t, 0, sizeof *t);
	memset(out, 0, sizeof *out);
	t->out = out;
	if (!block_size || block_size > PHYSICAL_RECORD || PHYSICAL_RECORD % block_size)
		return 0;
	t->per_record = PHYSICAL_RECORD / block_size;
	out->sample_rate = max_records <= PHYSICAL_RECORD_SAMPLE ? 1 : (double)PHYSICAL_RECORD_SAMPLE / (double)max_records;
	t->keep_below = out->sample_rate >= 1 ? UINT64_MAX : (uint64_t)(out->sample_rate * 18446744073709551615.0);
	if (u64map_init(&t->seen, max_records < PHYSICAL_RECORD_SAMPLE ? (size_t)max_records : PHYSICAL_RECORD_SAMPLE))
		return -1;
	out->have = true;
	return 0;
}

static int close_record(struct record_tally *t)
{
	if (!t->open)
		return 0;
	t->open = false;
	t->out->records++;
	if (!t->nonzero) {
		t->out->zero_records++;
		return 0;
	}
	uint64_t id = rng_mix64(t->hash ^ t->filled); /* a short record differs from a full one */
	if (id == U64MAP_EMPTY)
		id--;
	return id > t->keep_below || u64map_at(&t->seen, id) ? 0 : -1;
}

int record_tally_add(struct record_tally *t, const uint64_t *words, uint64_t n, uint64_t first_block, bool same_file)
{
	if (!t->out->have)
		return 0;
	if (!same_file && close_record(t))
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t record = (first_block + i) / t->per_record;
		if (t->open && record != t->record && close_record(t))
			return -1;
		if (!t->open) {
			t->open = true;
			t->nonzero = false;
			t->record = record;
			t->hash = 0x7265636f7264ULL; /* "record" */
			t->filled = 0;
		}
		uint64_t word = words[i] ? words[i] : CONTENT_ZERO + 1; /* never written reads as zeros */
		t->nonzero |= word != CONTENT_ZERO + 1;
		t->hash = rng_mix64(t->hash + word);
		t->filled++;
	}
	return 0;
}

int record_tally_end(struct record_tally *t)
{
	int rc = t->out->have ? close_record(t) : 0;
	if (t->out->have)
		t->out->distinct = (double)t->seen.used / t->out->sample_rate;
	u64map_free(&t->seen);
	return rc;
}

void record_sizes(struct record_estimate *out, const struct dist_gran *g, const char *why)
{
	const unsigned k = DIST_GRAN_SIZES - 1; /* the 128 KiB pieces */
	double nonzero = (double)(out->records - out->zero_records);
	out->have_zstd3 = g && g->present && g->bytes[k] && g->zstd3[k];
	if (!out->have_zstd3) {
		out->why_no_zstd3 = why ? why : "no [granularity 1] in the distribution";
		out->zstd3_ratio = out->alloc_per_record = out->alloc_bytes = out->dedup_alloc_bytes = 0;
		return;
	}
	out->why_no_zstd3 = NULL;
	out->zstd3_ratio = (double)g->bytes[k] / (double)g->zstd3[k];
	double mean = PHYSICAL_RECORD / out->zstd3_ratio;
	/* ZFS stores a record raw unless compression saves at least 1/8; granjudge.py's rule, applied
	 * to the mean record since the section keeps sums, not each record's size */
	out->alloc_per_record = mean > PHYSICAL_RECORD - PHYSICAL_RECORD / 8 ? PHYSICAL_RECORD : mean + PHYSICAL_SECTOR / 2;
	out->alloc_bytes = nonzero * out->alloc_per_record;
	out->dedup_alloc_bytes = out->distinct * out->alloc_per_record;
}

/* The ledger's records: each worker's region where it sits in its file (target_worker_path). */
static int records_of_ledger(const struct bench_config *c, const uint64_t *words, uint64_t n, struct record_estimate *out)
{
	struct record_tally t;
	uint64_t bs = c->o.block_size, per_worker = c->ledger_map.region_blocks;
	if (record_tally_init(&t, (uint32_t)bs, n / (PHYSICAL_RECORD / bs ? PHYSICAL_RECORD / bs : 1) + c->ledger_map.procs, out))
		return -1;
	char prev[PATH_MAX] = "", path[PATH_MAX];
	int rc = 0;
	for (uint64_t w = 0; !rc && per_worker && w < c->ledger_map.procs && w * per_worker < n; w++) {
		uint64_t base;
		target_worker_path(&c->target, (unsigned)w, path, sizeof path, &base);
		bool same = w && !strcmp(path, prev);
		rc = record_tally_add(&t, words + w * per_worker, per_worker, base / bs, same);
		memcpy(prev, path, sizeof prev);
	}
	if (record_tally_end(&t))
		rc = -1;
	const char *why = c->model                 ? NULL
			  : c->content_compress > 1 ? "the content compresses as --compress R says, not as the dataset"
						    : "the content is incompressible (no compressibility in the distribution)";
	record_sizes(out, c->model ? &c->dist.gran : NULL, why);
	return rc;
}

/* ---- the content-defined chunk store: the dataset's ratio ---- */

void cdc_sizes(struct cdc_estimate *out, const struct dist_cdc *cdc, const struct dist_gran *g, double logical_bytes)
{
	memset(out, 0, sizeof *out);
	double ratio = cdc && cdc->present ? dist_cdc_ratio(cdc) : 0;
	if (ratio <= 0) {
		out->why_not = cdc && cdc->present ? "[cdc 1] measured no chunk" : "no [cdc 1] in the distribution";
		return;
	}
	out->have = true;
	out->avg = cdc->avg;
	out->dedup_ratio = ratio;
	/* the shifted share is of the sampled (non-zero) bytes: scaled to all of them */
	if (cdc->sampled_bytes)
		out->shifted_share = (double)cdc->shifted_bytes / (double)cdc->sampled_bytes *
				     (double)(cdc->bytes - cdc->zero_bytes) / (double)cdc->bytes;
	out->dedup_bytes = logical_bytes / out->dedup_ratio;
	for (unsigned k = 0; g && g->present && k < DIST_GRAN_SIZES; k++)
		if ((DIST_GRAN_MIN << k) == cdc->avg && g->bytes[k] && g->lz4[k]) {
			out->have_lz4 = true;
			out->lz4_ratio = (double)g->bytes[k] / (double)g->lz4[k];
			out->lz4_bytes = out->dedup_bytes / out->lz4_ratio;
		}
}

/* ---- the estimate: a hashed sample, each content compressed alone with both codecs ---- */

struct sample {
	struct compmodel_codecs *codecs;
	uint64_t threshold;   /* an id is measured when its hash is below this */
	struct physical_estimate *out;
};

static bool sample_wants(struct walk *w, uint64_t id)
{
	const struct sample *s = w->arg;
	return id != CONTENT_ZERO && rng_mix64(id ^ 0x706879736963ULL /* "physic" */) < s->threshold;
}

static int sample_visit(struct walk *w, uint64_t id)
{
	struct sample *s = w->arg;
	struct compmodel_sizes z;
	if (compmodel_measure(s->codecs, w->buf, w->gen.block_size, &z, NULL))
		return -1;
	s->out->sampled++;
	s->out->zstd_bytes += z.zstd;
	s->out->lz4_bytes += z.lz4;
	return 0;
}

int physical_estimate(const struct bench_config *c, const uint64_t *words, uint64_t n, const struct id_counts *dups,
		      struct physical_estimate *out)
{
	memset(out, 0, sizeof *out);
	if (records_of_ledger(c, words, n, &out->record))
		return -1;
	uint64_t live = 0;
	for (uint64_t b = 0; b < n; b++)
		live += words[b] != 0;
	/* LZ4 of chunks only where the content compresses as the dataset's does (as for records) */
	cdc_sizes(&out->cdc, &c->dist.cdc, c->model ? &c->dist.gran : NULL, (double)live * (double)c->o.block_size);
	size_t slot = 0;
	uint64_t id, count, zero = 0;
	while (idc_next(dups, &slot, &id, &count))
		zero += id == CONTENT_ZERO;
	out->distinct = dups->map.used - zero + dups->unique;
	if (!out->distinct)
		return 0;
	struct sample s = {.out = out, .codecs = compmodel_codecs_new(0)};
	s.threshold = out->distinct <= PHYSICAL_SAMPLE
			      ? UINT64_MAX
			      : (uint64_t)((double)PHYSICAL_SAMPLE / (double)out->distinct * 18446744073709551615.0);
	struct walk w = {.c = c, .wants = sample_wants, .visit = sample_visit, .arg = &s};
	int rc = s.codecs ? walk_live(&w, words, n, dups) : -1;
	compmodel_codecs_free(s.codecs);
	if (!rc && out->sampled) {
		double scale = (double)out->distinct / (double)out->sampled;
		out->zstd_bytes *= scale;
		out->lz4_bytes *= scale;
	}
	return rc;
}

/* ---- the engine's exact expectation ---- */

struct engine_sum {
	char *out;
	int cap;
	uint64_t bytes;
};

static bool every(struct walk *w, uint64_t id)
{
	return true;
}

uint64_t physical_engine_block_bytes(const void *block, uint32_t bs, char *scratch, int cap)
{
	int z = LZ4_compress_default(block, scratch, (int)bs, cap);
	return z > 0 && (uint32_t)z + 4 <= bs - bs / 8 ? (uint64_t)z + 4 : bs;
}

static int engine_visit(struct walk *w, uint64_t id)
{
	struct engine_sum *e = w->arg;
	e->bytes += physical_engine_block_bytes(w->buf, w->gen.block_size, e->out, e->cap);
	return 0;
}

int physical_engine_bytes(const struct bench_config *c, const uint64_t *words, uint64_t n,
			  const struct id_counts *dups, bool lz4, uint64_t *bytes)
{
	if (!lz4) {
		*bytes = (dups->map.used + dups->unique) * c->o.block_size;
		return 0;
	}
	struct engine_sum e = {.cap = LZ4_compressBound((int)c->o.block_size)};
	if (!(e.out = malloc((size_t)e.cap)))
		return -1;
	struct walk w = {.c = c, .wants = every, .visit = engine_visit, .arg = &e};
	int rc = walk_live(&w, words, n, dups);
	free(e.out);
	*bytes = e.bytes;
	return rc;
}
