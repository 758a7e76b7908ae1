/* trace.c - parse an FIU IODedup trace (the format of Dmdedup's and others' evaluations, from
 * the FIU SyLab traces: homes, mail, web-vm) line by line, numbering MD5s as they first appear. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/errmsg.h"
#include "lib/reserve.h"
#include "lib/rng.h"
#include "lib/u64map.h"
#include "bench/workload/trace.h"

/* md5 of 4096 zero bytes */
static const unsigned char zero_md5[16] = {0x62, 0x0f, 0x0b, 0x67, 0xa9, 0x1f, 0x7f, 0x74,
					   0x15, 0x1b, 0xc5, 0xbe, 0x74, 0x5b, 0x71, 0x10};

static uint64_t md5_hash(const unsigned char *k)
{
	uint64_t a, b;
	memcpy(&a, k, 8);
	memcpy(&b, k + 8, 8);
	return rng_mix64(a ^ rng_mix64(b));
}

static int table_grow(struct trace *t)
{
	size_t n = t->slots ? t->slots * 2 : 4096;
	unsigned char(*keys)[16] = calloc(n, 16);
	uint64_t *vals = calloc(n, sizeof *vals);
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t i = 0; i < t->slots; i++) {
		if (!t->vals[i])
			continue;
		size_t s = md5_hash(t->keys[i]) & (n - 1);
		while (vals[s])
			s = (s + 1) & (n - 1);
		memcpy(keys[s], t->keys[i], 16);
		vals[s] = t->vals[i];
	}
	free(t->keys);
	free(t->vals);
	t->keys = keys;
	t->vals = vals;
	t->slots = n;
	return 0;
}

/* The content id of an MD5: the zero block's is TRACE_ZERO_ID, others 1 + the order of first
 * appearance. 0 or -1 (memory). */
static int md5_id(struct trace *t, const unsigned char *k, uint64_t *id)
{
	if ((t->distinct + 1) * 2 > t->slots && table_grow(t))
		return -1;
	size_t s = md5_hash(k) & (t->slots - 1);
	while (t->vals[s]) {
		if (!memcmp(t->keys[s], k, 16)) {
			*id = t->vals[s] - 1;
			return 0;
		}
		s = (s + 1) & (t->slots - 1);
	}
	memcpy(t->keys[s], k, 16);
	*id = memcmp(k, zero_md5, 16) ? t->distinct + 1 : TRACE_ZERO_ID;
	/* ids stay below distinct + 2 (the zero block's MD5 counts in distinct, not as an id) */
	t->vals[s] = *id + 1;
	t->distinct++;
	return 0;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool parse_md5(const char *s, unsigned char *out)
{
	if (strlen(s) != 32)
		return false;
	for (int i = 0; i < 16; i++) {
		int h = hexval(s[2 * i]), l = hexval(s[2 * i + 1]);
		if (h < 0 || l < 0)
			return false;
		out[i] = (unsigned char)(h << 4 | l);
	}
	return true;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

#define MAX_FIELDS (8 + 256)

/* One request line, its fields checked. */
struct trace_line {
	uint64_t ts, lba, size, nblocks;
	bool write;
	char **md5s; /* nblocks of them */
};

/* Checks a request line's nf fields (at least one) and fills q; 0, or -1 with "PATH:LINE: why". */
static int parse_request(const char *path, unsigned long long ln, char **fields, int nf, struct trace_line *q,
			 struct dd_err *err)
{
	uint64_t pid, major, minor;
	if (nf < 9)
		return err_fail(err, -1, "%s:%llu: %d fields, want 'timestamp pid process lba size op major minor md5'",
				path, ln, nf);
	const char *bad = !parse_u64(fields[0], &q->ts) ? "timestamp" : !parse_u64(fields[1], &pid) ? "pid"
			  : !parse_u64(fields[3], &q->lba) ? "lba" : !parse_u64(fields[4], &q->size) ? "size"
			  : !parse_u64(fields[6], &major) ? "major" : !parse_u64(fields[7], &minor) ? "minor" : NULL;
	if (bad)
		return err_fail(err, -1, "%s:%llu: %s '%.40s' is not a decimal number", path, ln, bad,
				fields[bad[0] == 't' ? 0 : bad[0] == 'p' ? 1 : bad[0] == 'l' ? 3 : bad[0] == 's' ? 4
				       : bad[1] == 'a' ? 6 : 7]);
	q->write = !strcmp(fields[5], "W") || !strcmp(fields[5], "w");
	if (!q->write && strcmp(fields[5], "R") && strcmp(fields[5], "r"))
		return err_fail(err, -1, "%s:%llu: op '%.20s' is neither W nor R", path, ln, fields[5]);
	const uint64_t per = TRACE_BLOCK / TRACE_SECTOR;
	if (q->size == 0 || q->size % per || q->size / per > MAX_FIELDS - 8)
		return err_fail(err, -1, "%s:%llu: size %llu sectors is not a multiple of %llu (one MD5 per 4 KiB) from 8 to %d",
				path, ln, (unsigned long long)q->size, (unsigned long long)per, (MAX_FIELDS - 8) * 8);
	if (q->lba % per)
		return err_fail(err, -1, "%s:%llu: lba %llu is not 4 KiB aligned (a multiple of 8 sectors)", path, ln,
				(unsigned long long)q->lba);
	q->nblocks = q->size / per;
	if ((uint64_t)(nf - 8) != q->nblocks)
		return err_fail(err, -1, "%s:%llu: %d MD5s for %llu sectors, want %llu (one per 4 KiB)", path, ln, nf - 8,
				(unsigned long long)q->size, (unsigned long long)q->nblocks);
	if (q->lba > (UINT64_MAX / TRACE_SECTOR) - q->size)
		return err_fail(err, -1, "%s:%llu: lba %llu is out of range", path, ln, (unsigned long long)q->lba);
	q->md5s = fields + 8;
	return 0;
}

/* Appends a checked request to t (its MD5s numbered, the totals counted); prev_line is the line of
 * the request before it. 0, or -1 with "PATH:LINE: why". */
static int add_request(struct trace *t, const char *path, unsigned long long ln, unsigned long long prev_line,
		       const struct trace_line *q, struct dd_err *err)
{
	if (array_reserve((void **)&t->req, &t->cap, t->n + 1, sizeof *t->req, 1024) ||
	    (q->write && array_reserve((void **)&t->ids, &t->idcap, t->nids + q->nblocks, sizeof *t->ids, 1024)))
		return err_fail(err, -1, "%s:%llu: out of memory", path, ln);
	if (t->n && q->ts < t->req[t->n - 1].ts_ns)
		return err_fail(err, -1, "%s:%llu: timestamp %llu is before the previous request's (%llu, line %llu): a "
				"trace is in time order", path, ln, (unsigned long long)q->ts,
				(unsigned long long)t->req[t->n - 1].ts_ns, prev_line);
	const uint64_t per = TRACE_BLOCK / TRACE_SECTOR;
	t->req[t->n] = (struct trace_req){q->ts, q->lba / per, (uint32_t)q->nblocks, q->write, t->nids};
	for (uint64_t k = 0; k < q->nblocks; k++) {
		unsigned char md5[16];
		uint64_t id;
		if (!parse_md5(q->md5s[k], md5))
			return err_fail(err, -1, "%s:%llu: md5 '%.40s' is not 32 hexadecimal digits", path, ln, q->md5s[k]);
		if (md5_id(t, md5, &id))
			return err_fail(err, -1, "%s:%llu: out of memory", path, ln);
		if (q->write)
			t->ids[t->nids++] = id;
	}
	t->n++;
	if (q->write) {
		t->writes++;
		t->write_blocks += q->nblocks;
	} else {
		t->reads++;
		t->read_blocks += q->nblocks;
	}
	uint64_t end = (q->lba + q->size) * TRACE_SECTOR;
	if (end > t->end_bytes)
		t->end_bytes = end;
	if (q->nblocks > t->max_blocks)
		t->max_blocks = (uint32_t)q->nblocks;
	return 0;
}

int trace_load(const char *path, struct trace *t, struct dd_err *err)
{
	memset(t, 0, sizeof *t);
	FILE *f = fopen(path, "re");
	if (!f)
		return err_fail_errno(err, -1, errno, "%s", path);
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;
	unsigned long long prev_line = 0;
	while (!rc && (len = getline(&line, &cap, f)) >= 0) {
		t->lines++;
		unsigned long long ln = (unsigned long long)t->lines;
		if ((size_t)len != strlen(line)) {
			rc = err_fail(err, -1, "%s:%llu: a NUL byte (not a text trace)", path, ln);
			break;
		}
		char *fields[MAX_FIELDS], *save = NULL;
		int nf = 0;
		for (char *tok = strtok_r(line, " \t\r\n", &save); tok && nf < MAX_FIELDS; tok = strtok_r(NULL, " \t\r\n", &save))
			fields[nf++] = tok;
		if (nf == 0 || fields[0][0] == '#')
			continue;
		struct trace_line q;
		rc = parse_request(path, ln, fields, nf, &q, err) || add_request(t, path, ln, prev_line, &q, err) ? -1 : 0;
		prev_line = ln;
	}
	if (!rc && ferror(f))
		rc = err_fail_errno(err, -1, errno, "%s", path);
	if (!rc && t->n == 0)
		rc = err_fail(err, -1, "%s: no request in the trace", path);
	free(line);
	fclose(f);
	return rc;
}

void trace_free(struct trace *t)
{
	free(t->req);
	free(t->ids);
	free(t->keys);
	free(t->vals);
	memset(t, 0, sizeof *t);
}

uint8_t *trace_live_contents(const struct trace *t, size_t nreq, uint64_t *blocks, uint64_t *distinct)
{
	/* block -> id of its last write, then the distinct ids among them */
	struct u64map last = {0};
	uint8_t *live = calloc(t->distinct + 2, 1);
	bool ok = false;
	if (!live || u64map_init(&last, t->write_blocks))
		goto out;
	*blocks = *distinct = 0;
	for (size_t i = 0; i < nreq && i < t->n; i++) {
		const struct trace_req *r = &t->req[i];
		for (uint32_t k = 0; r->write && k < r->nblocks; k++) {
			uint64_t *id = u64map_at(&last, r->block + k);
			if (!id)
				goto out;
			*id = t->ids[r->first_id + k];
		}
	}
	*blocks = last.used;
	size_t slot = 0;
	uint64_t block, id;
	while (u64map_next(&last, &slot, &block, &id))
		if (!live[id]) {
			live[id] = 1;
			(*distinct)++;
		}
	ok = true;
out:
	u64map_free(&last);
	if (!ok) {
		free(live);
		live = NULL;
	}
	return live;
}

int trace_live(const struct trace *t, uint64_t *blocks, uint64_t *distinct)
{
	uint8_t *live = trace_live_contents(t, t->n, blocks, distinct);
	free(live);
	return live ? 0 : -1;
}
