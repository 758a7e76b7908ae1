/* sidedata.c - the compressibility samples and locality windows of a Berkeley DB analysis, as
 * side records: 's' + fingerprint -> (zstd, lz4, hmin), 'l' + window number -> first positions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gen/sidedata.h"

#define SAMPLE_LEN 16

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

struct load_arg {
	struct comp_sampler *s;
	struct loc_recorder *r;
	uint64_t block_size;
	uint64_t *firsts;
	int bad;
};

static int load_sample(const uint8_t *key, const uint8_t *val, size_t vlen, void *arg)
{
	struct load_arg *a = arg;
	if (vlen != SAMPLE_LEN) {
		a->bad = 1;
		return -1;
	}
	struct comp_sample v = {(uint32_t)get_le(val, 4), (uint32_t)get_le(val + 4, 4), get_le(val + 8, 8)};
	if (v.zstd == 0 || v.zstd > a->block_size || v.lz4 == 0 || v.lz4 > a->block_size) {
		a->bad = 1;
		return -1;
	}
	return comp_sampler_load(a->s, key, &v) ? -1 : 0;
}

int side_load_samples(struct gindex *db, struct comp_sampler *s, uint64_t block_size, struct dd_err *err)
{
	struct load_arg a = {.s = s, .block_size = block_size};
	if (index_bdb_each_side(db, 's', db->fp_len, load_sample, &a) == 0)
		return 0;
	err_fail(err, -1, "%s", a.bad ? "a compressibility sample record is corrupt" : db->err.msg[0] ? db->err.msg : "out of memory");
	return -1;
}

static int save_sample(const uint8_t *fp, const struct comp_sample *v, void *arg)
{
	struct gindex *db = arg;
	uint8_t val[SAMPLE_LEN];
	put_le(val, v->zstd, 4);
	put_le(val + 4, v->lz4, 4);
	put_le(val + 8, v->hmin, 8);
	return index_bdb_put_side(db, 's', fp, db->fp_len, val, sizeof val);
}

int side_save_samples(struct gindex *db, const struct comp_sampler *s, struct dd_err *err)
{
	if (index_bdb_drop_side(db, 's', db->fp_len) || (s && comp_sampler_each(s, save_sample, db))) {
		err_fail(err, -1, "%s", db->err.msg);
		return -1;
	}
	return 0;
}

static int load_window(const uint8_t *key, const uint8_t *val, size_t vlen, void *arg)
{
	struct load_arg *a = arg;
	if (vlen != LOC_WINDOW * 8) {
		a->bad = 1;
		return -1;
	}
	uint64_t number = 0;
	for (int i = 0; i < 8; i++)
		number = number << 8 | key[i];
	for (size_t i = 0; i < LOC_WINDOW; i++)
		a->firsts[i] = get_le(val + 8 * i, 8);
	return loc_load_window(a->r, number, a->firsts) ? -1 : 0;
}

int side_load_windows(struct gindex *db, struct loc_recorder *r, struct dd_err *err)
{
	struct load_arg a = {.r = r, .firsts = malloc(LOC_WINDOW * sizeof(uint64_t))};
	int rc = a.firsts ? index_bdb_each_side(db, 'l', 8, load_window, &a) : -1;
	free(a.firsts);
	if (rc)
		err_fail(err, -1, "%s", a.bad ? "a locality record is corrupt" : db->err.msg[0] ? db->err.msg : "out of memory");
	return rc ? -1 : 0;
}

static int save_window(uint64_t number, const uint64_t *firsts, void *arg)
{
	struct gindex *db = arg;
	uint8_t key[8], *val = malloc(LOC_WINDOW * 8);
	if (!val) {
		err_fail(&db->err, -1, "out of memory");
		return -1;
	}
	for (int i = 0; i < 8; i++) /* big-endian: the B-tree keeps the windows in stream order */
		key[i] = (uint8_t)(number >> (56 - 8 * i));
	for (size_t i = 0; i < LOC_WINDOW; i++)
		put_le(val + 8 * i, firsts[i], 8);
	int rc = index_bdb_put_side(db, 'l', key, sizeof key, val, LOC_WINDOW * 8);
	free(val);
	return rc;
}

int side_save_windows(struct gindex *db, const struct loc_recorder *r, struct dd_err *err)
{
	if (index_bdb_drop_side(db, 'l', 8) || (r && loc_each_window(r, save_window, db))) {
		err_fail(err, -1, "%s", db->err.msg);
		return -1;
	}
	return 0;
}
