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

int trace_load(const char *path, struct trace *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	FILE *f = fopen(path, "re");
	if (!f)
		return errmsg_set(err, errlen, -1, "%s: %s", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;
	unsigned long long prev_line = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		t->lines++;
		if ((size_t)len != strlen(line)) {
			rc = errmsg_set(err, errlen, -1, "%s:%llu: a NUL byte (not a text trace)", path, (unsigned long long)t->lines);
			break;
		}
		char *fields[MAX_FIELDS], *save = NULL;
		int nf = 0;
		for (char *tok = strtok_r(line, " \t\r\n", &save); tok && nf < MAX_FIELDS; tok = strtok_r(NULL, " \t\r\n", &save))
			fields[nf++] = tok;
		if (nf == 0 || fields[0][0] == '#')
			continue;
		unsigned long long ln = (unsigned long long)t->lines;
		uint64_t ts, pid, lba, size, major, minor;
		if (nf < 9) {
			rc = errmsg_set(err, errlen, -1, "%s:%llu: %d fields, want 'timestamp pid process lba size op major minor md5'",
					path, ln, nf);
			break;
		}
		const char *bad = !parse_u64(fields[0], &ts) ? "timestamp" : !parse_u64(fields[1], &pid) ? "pid"
				  : !parse_u64(fields[3], &lba) ? "lba" : !parse_u64(fields[4], &size) ? "size"
				  : !parse_u64(fields[6], &major) ? "major" : !parse_u64(fields[7], &minor) ? "minor" : NULL;
		if (bad) {
			rc = errmsg_set(err, errlen, -1, "%s:%llu: %s '%.40s' is not a decimal number", path, ln, bad,
					fields[bad[0] == 't' ? 0 : bad[0] == 'p' ? 1 : bad[0] == 'l' ? 3 : bad[0] == 's' ? 4
						: bad[1] == 'a' ? 6 : 7]);
			break;
		}
		bool write = !strcmp(fields[5], "W") || !strcmp(fields[5], "w");
		if (!write && strcmp(fields[5], "R") && strcmp(fields[5], "r")) {
			rc = errmsg_set(err, errlen, -1, "%s:%llu: op '%.20s' is neither W nor R", path, ln, fields[5]);
			break;
		}
		const uint64_t per = TRACE_BLOCK / TRACE_SECTOR;
		if (size == 0 || size % per || size / per > MAX_FIELDS - 8) {
			rc = errmsg_set(err, errlen, -1, "%s:%llu: size %llu sectors is not a multiple of %llu (one MD5 per 4 KiB) "
					"from 8 to %d", path, ln, (unsigned long long)size, (unsigned long long)per, (MAX_FIELDS - 8) * 8);
			break;
		}
		if (lba % per) {
			rc = errmsg_set(err, errlen, -1, "%s:%llu: lba %llu is not 4 KiB aligned (a multiple of 8 sectors)", path,
					ln, (unsigned long long)lba);
			break;
		}
		uint64_t nblocks = size / per;
		if ((uint64_t)(nf - 8) != nblocks) {
			rc = errmsg_set(err, errlen, -1, "%s:%llu: %d MD5s for %llu sectors, want %llu (one per 4 KiB)", path, ln,
					nf - 8, (unsigned long long)size, (unsigned long long)nblocks);
			break;
		}
		if (lba > (UINT64_MAX / TRACE_SECTOR) - size) {
			rc = errmsg_set(err, errlen, -1, "%s:%llu: lba %llu is out of range", path, ln, (unsigned long long)lba);
			break;
		}
		if (array_reserve((void **)&t->req, &t->cap, t->n + 1, sizeof *t->req, 1024) ||
		    (write && array_reserve((void **)&t->ids, &t->idcap, t->nids + nblocks, sizeof *t->ids, 1024))) {
			rc = errmsg_set(err, errlen, -1, "%s:%llu: out of memory", path, ln);
			break;
		}
		if (t->n && ts < t->req[t->n - 1].ts_ns) {
			rc = errmsg_set(err, errlen, -1, "%s:%llu: timestamp %llu is before the previous request's (%llu, line "
					"%llu): a trace is in time order", path, ln, (unsigned long long)ts,
					(unsigned long long)t->req[t->n - 1].ts_ns, (unsigned long long)prev_line);
			break;
		}
		prev_line = ln;
		struct trace_req *r = &t->req[t->n];
		*r = (struct trace_req){ts, lba / per, (uint32_t)nblocks, write, t->nids};
		for (uint64_t k = 0; k < nblocks && !rc; k++) {
			unsigned char md5[16];
			uint64_t id;
			if (!parse_md5(fields[8 + k], md5))
				rc = errmsg_set(err, errlen, -1, "%s:%llu: md5 '%.40s' is not 32 hexadecimal digits", path, ln,
						fields[8 + k]);
			else if (md5_id(t, md5, &id))
				rc = errmsg_set(err, errlen, -1, "%s:%llu: out of memory", path, ln);
			else if (write)
				t->ids[t->nids++] = id;
		}
		if (rc)
			break;
		t->n++;
		if (write) {
			t->writes++;
			t->write_blocks += nblocks;
		} else {
			t->reads++;
			t->read_blocks += nblocks;
		}
		uint64_t end = (lba + size) * TRACE_SECTOR;
		if (end > t->end_bytes)
			t->end_bytes = end;
		if (nblocks > t->max_blocks)
			t->max_blocks = (uint32_t)nblocks;
	}
	if (!rc && ferror(f))
		rc = errmsg_set(err, errlen, -1, "%s: %s", path, strerror(errno));
	if (!rc && t->n == 0)
		rc = errmsg_set(err, errlen, -1, "%s: no request in the trace", path);
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

int trace_live(const struct trace *t, uint64_t *blocks, uint64_t *distinct)
{
	/* block -> id of its last write, then the distinct ids among them */
	struct u64map last = {0};
	uint8_t *seen = calloc(t->distinct + 2, 1);
	int rc = -1;
	if (!seen || u64map_init(&last, t->write_blocks))
		goto out;
	*blocks = *distinct = 0;
	for (size_t i = 0; i < t->n; i++) {
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
		if (!seen[id]) {
			seen[id] = 1;
			(*distinct)++;
		}
	rc = 0;
out:
	u64map_free(&last);
	free(seen);
	return rc;
}
