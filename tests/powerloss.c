/* powerloss.c - the engine's power-loss harness: records every write and sync the engine issues
 * to its durable files during a random workload, then rebuilds the on-disk state at many cut points
 * and checks what a reopened volume holds.
 *
 * Usage: powerloss DIR CUTS SEED none|lz4
 * At a cut point (an event index) each durable file holds its contents as of its last completed
 * sync, plus, for every 512-byte sector written since, any one of the versions written since (each
 * unsynced write survives or is lost sector by sector, independently: lost subsets and reordering).
 * The volume is reopened (no cache files: the engine must rebuild from the durable ones) and must
 * read back, for every LBN, the content it had when the last completed flush started, or one
 * written after that; fsck must be clean (reference counts, counters, index, durable map).
 * Prints "N cut points, V violations"; exits 1 when V > 0, 2 on bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "reference-engine/engine.h"

#define BS 4096
#define LBNS 128
#define DATA_BLOCKS 176
#define JOURNAL (16 * 1024)
#define OPS 700
#define SECTOR 512
#define FILES (2 + 8)

enum ev_kind { EV_WRITE, EV_SYNC, EV_FLUSH_START, EV_FLUSH_DONE };

struct event {
	enum ev_kind kind;
	unsigned file;
	uint64_t off;
	size_t len;
	uint8_t *data;
};

struct version {
	uint64_t content;   /* 0 = zeros */
	size_t start, done; /* event indices around the write */
};

struct harness {
	struct event *ev;
	size_t nev, cap;
	struct version *hist[LBNS];
	size_t nhist[LBNS];
	uint8_t *base[FILES];
	size_t base_len[FILES];
	uint64_t rng;
	int failed;
};

static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Content `id` (0 = zeros): half of the ids compress (a random third, then a repeated byte). */
static void fill(uint64_t id, uint8_t *buf)
{
	if (!id) {
		memset(buf, 0, BS);
		return;
	}
	uint64_t s = id * 0x2545f4914f6cdd1dULL;
	size_t random = id & 1 ? BS / 3 : BS;
	for (size_t i = 0; i < random; i += 8) {
		uint64_t v = next(&s);
		memcpy(buf + i, &v, 8);
	}
	memset(buf + random, (int)(id & 0xff), BS - random);
	memcpy(buf, &id, 8);
}

static struct event *push(struct harness *h, enum ev_kind k)
{
	if (h->nev == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 4096;
		h->ev = realloc(h->ev, h->cap * sizeof *h->ev);
		if (!h->ev)
			abort();
	}
	struct event *e = &h->ev[h->nev++];
	memset(e, 0, sizeof *e);
	e->kind = k;
	return e;
}

static void rec_write(void *arg, unsigned file, uint64_t off, const void *buf, size_t len)
{
	struct harness *h = arg;
	struct event *e = push(h, EV_WRITE);
	e->file = file;
	e->off = off;
	e->len = len;
	e->data = malloc(len);
	if (!e->data)
		abort();
	memcpy(e->data, buf, len);
}

static void rec_sync(void *arg, unsigned file)
{
	push(arg, EV_SYNC)->file = file;
}

static int read_file(const char *dir, unsigned f, uint8_t **out, size_t *len)
{
	char name[64], path[4200];
	engine_durable_name(f, name, sizeof name);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st))
		return -1;
	*len = (size_t)st.st_size;
	*out = calloc(1, *len + 1);
	ssize_t n = pread(fd, *out, *len, 0);
	close(fd);
	return n == (ssize_t)*len ? 0 : -1;
}

static void note_version(struct harness *h, uint64_t lbn, uint64_t content, size_t start)
{
	h->hist[lbn] = realloc(h->hist[lbn], (h->nhist[lbn] + 1) * sizeof **h->hist);
	h->hist[lbn][h->nhist[lbn]++] = (struct version){content, start, h->nev};
}

static int workload(struct harness *h, const char *vol)
{
	struct engine_recorder rec = {.write = rec_write, .sync = rec_sync, .arg = h};
	struct engine_open_params op = {.recorder = &rec, .commit_every = 0};
	struct engine *e;
	struct dd_err err;
	if (engine_open(vol, &op, &e, &err)) {
		fprintf(stderr, "powerloss: %s\n", err.msg);
		return -1;
	}
	static uint8_t buf[BS] __attribute__((aligned(4096)));
	uint64_t fresh = 1000;
	for (int i = 0; i < OPS; i++) {
		unsigned r = (unsigned)(next(&h->rng) % 100);
		int rc = 0;
		if (r < 82) {
			uint64_t lbn = next(&h->rng) % LBNS;
			/* a small pool of recurring contents (dedup) or a fresh one, sometimes with NODEDUP */
			bool dup = next(&h->rng) % 2;
			uint64_t id = dup ? 1 + next(&h->rng) % 24 : fresh++;
			unsigned hints = !dup && next(&h->rng) % 3 == 0 ? ENGINE_NODEDUP : 0;
			fill(id, buf);
			size_t start = h->nev;
			rc = engine_write_hint(e, lbn, buf, hints);
			note_version(h, lbn, id, start);
		} else if (r < 88) {
			uint64_t lbn = next(&h->rng) % LBNS, n = 1 + next(&h->rng) % 4;
			if (lbn + n > LBNS)
				n = LBNS - lbn;
			size_t start = h->nev;
			rc = engine_discard(e, lbn, n);
			for (uint64_t l = lbn; l < lbn + n; l++)
				note_version(h, l, 0, start);
		} else if (r < 98) {
			push(h, EV_FLUSH_START);
			rc = engine_flush(e);
			push(h, EV_FLUSH_DONE);
		} else {
			uint64_t freed;
			rc = engine_gc(e, &freed);
		}
		if (rc) {
			fprintf(stderr, "powerloss: op %d: %s\n", i, strerror(-rc));
			engine_close(e);
			return -1;
		}
	}
	push(h, EV_FLUSH_START);
	int rc = engine_close(e); /* a last flush and checkpoint: cut points inside them too */
	push(h, EV_FLUSH_DONE);
	return rc;
}

/* The durable files as a power loss at event `cut` may leave them. */
static int build_image(struct harness *h, size_t cut, const char *dir)
{
	uint8_t *img[FILES], *durable[FILES];
	for (unsigned f = 0; f < FILES; f++) {
		durable[f] = malloc(h->base_len[f] + 1);
		memcpy(durable[f], h->base[f], h->base_len[f]);
	}
	size_t last_sync[FILES] = {0};
	for (size_t i = 0; i < cut; i++)
		if (h->ev[i].kind == EV_SYNC) {
			unsigned f = h->ev[i].file;
			for (size_t j = last_sync[f]; j < i; j++)
				if (h->ev[j].kind == EV_WRITE && h->ev[j].file == f)
					memcpy(durable[f] + h->ev[j].off, h->ev[j].data, h->ev[j].len);
			last_sync[f] = i;
		}
	int rc = 0;
	for (unsigned f = 0; f < FILES; f++) {
		img[f] = durable[f];
		for (size_t j = last_sync[f]; j < cut; j++) {
			const struct event *e = &h->ev[j];
			if (e->kind != EV_WRITE || e->file != f)
				continue;
			for (uint64_t s = e->off / SECTOR * SECTOR; s < e->off + e->len; s += SECTOR) {
				if (next(&h->rng) & 1)
					continue; /* this sector of this write never reached the disk */
				uint64_t lo = s < e->off ? e->off : s, hi = s + SECTOR > e->off + e->len ? e->off + e->len : s + SECTOR;
				memcpy(img[f] + lo, e->data + (lo - e->off), hi - lo);
			}
		}
		char name[64], path[4200];
		engine_durable_name(f, name, sizeof name);
		snprintf(path, sizeof path, "%s/%s", dir, name);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || pwrite(fd, img[f], h->base_len[f], 0) != (ssize_t)h->base_len[f])
			rc = -1;
		if (fd >= 0)
			close(fd);
		free(durable[f]);
	}
	return rc;
}

static void report(void *arg, const char *line)
{
	if (*(int *)arg < 3)
		fprintf(stderr, "  fsck: %s\n", line);
	(*(int *)arg)++;
}

/* Reopen the image and check it; returns the number of violations (0 or 1). */
static int check_cut(struct harness *h, size_t cut, const char *dir, const char *sb_src)
{
	char cmd[17000];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir '%s' && cp '%s/superblock' '%s/'", dir, dir, sb_src, dir);
	if (system(cmd) || build_image(h, cut, dir))
		return 1;
	size_t flush_start = 0; /* the last flush that completed before the cut started here */
	for (size_t i = 0, s = 0; i < cut; i++) {
		if (h->ev[i].kind == EV_FLUSH_START)
			s = i;
		if (h->ev[i].kind == EV_FLUSH_DONE)
			flush_start = s;
	}
	struct engine_open_params op = {0};
	struct engine *e;
	struct dd_err err;
	if (engine_open(dir, &op, &e, &err)) {
		fprintf(stderr, "cut %zu: reopen failed: %s\n", cut, err.msg);
		return 1;
	}
	static uint8_t got[BS] __attribute__((aligned(4096))), want[BS];
	int bad = 0;
	for (uint64_t l = 0; l < LBNS && !bad; l++) {
		if (engine_read(e, l, got)) {
			fprintf(stderr, "cut %zu: lbn %llu unreadable\n", cut, (unsigned long long)l);
			bad = 1;
			break;
		}
		uint64_t flushed = 0;
		bool ok = false;
		for (size_t v = 0; v < h->nhist[l]; v++)
			if (h->hist[l][v].done <= flush_start)
				flushed = h->hist[l][v].content;
		fill(flushed, want);
		ok = !memcmp(got, want, BS);
		for (size_t v = 0; !ok && v < h->nhist[l]; v++) {
			const struct version *x = &h->hist[l][v];
			if (x->done > flush_start && x->start < cut) {
				fill(x->content, want);
				ok = !memcmp(got, want, BS);
			}
		}
		if (!ok) {
			uint64_t found;
			memcpy(&found, got, 8);
			fprintf(stderr, "cut %zu (last flush started at %zu): lbn %llu reads neither its flushed content %llu "
					"nor a later one (it reads one starting %#llx)\n", cut, flush_start, (unsigned long long)l,
				(unsigned long long)flushed, (unsigned long long)found);
			if (getenv("POWERLOSS_DEBUG"))
				for (size_t v = 0; v < h->nhist[l]; v++)
					fprintf(stderr, "  version %llu written over events [%zu, %zu)\n",
						(unsigned long long)h->hist[l][v].content, h->hist[l][v].start, h->hist[l][v].done);
			bad = 1;
		}
	}
	int problems = 0;
	long n = engine_fsck(e, report, &problems);
	if (n) {
		fprintf(stderr, "cut %zu: fsck found %ld problems\n", cut, n);
		bad = 1;
	}
	if (engine_close(e)) {
		fprintf(stderr, "cut %zu: close failed\n", cut);
		bad = 1;
	}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc != 5 || (strcmp(argv[4], "none") && strcmp(argv[4], "lz4"))) {
		fprintf(stderr, "usage: powerloss DIR CUTS SEED none|lz4\n");
		return 2;
	}
	const char *dir = argv[1];
	long cuts = atol(argv[2]);
	struct harness h = {0};
	h.rng = strtoull(argv[3], NULL, 10);
	char vol[4096], img[4096];
	struct dd_err err;
	snprintf(vol, sizeof vol, "%s/vol", dir);
	snprintf(img, sizeof img, "%s/cut", dir);
	struct engine_format_params fp = {LBNS * BS, DATA_BLOCKS * BS, BS, "mem", "sha1", argv[4], JOURNAL, NULL};
	if (engine_format(vol, &fp, &err)) {
		fprintf(stderr, "powerloss: %s\n", err.msg);
		return 2;
	}
	/* The base image: the formatted durable files (the first open builds the caches only). */
	struct engine *e;
	struct engine_open_params op = {0};
	if (engine_open(vol, &op, &e, &err) || engine_close(e))
		return 1;
	for (unsigned f = 0; f < FILES; f++)
		if (read_file(vol, f, &h.base[f], &h.base_len[f]))
			return 1;
	if (workload(&h, vol))
		return 1;
	long violations = 0;
	for (long c = 0; c < cuts; c++) {
		/* cut points spread over the whole history, the last one after everything */
		size_t cut = c == cuts - 1 ? h.nev : (size_t)(next(&h.rng) % (h.nev + 1));
		violations += check_cut(&h, cut, img, vol);
	}
	printf("%ld cut points, %ld violations (%zu recorded events, compression %s)\n", cuts, violations, h.nev, argv[4]);
	for (size_t i = 0; i < h.nev; i++)
		free(h.ev[i].data);
	free(h.ev);
	for (unsigned l = 0; l < LBNS; l++)
		free(h.hist[l]);
	for (unsigned f = 0; f < FILES; f++)
		free(h.base[f]);
	return violations ? 1 : 0;
}
