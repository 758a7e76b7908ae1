/* locality.c - duplicate locality: per-thread records of fingerprint prefixes by stream position,
 * their resolution to first positions through one walk of the index, and the run histograms. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "locality.h"

unsigned loc_level_for(uint64_t stream_blocks)
{
	unsigned level = 0;
	while (level < 40 && (LOC_BUDGET << level) < stream_blocks)
		level++;
	return level;
}

bool loc_window_selected(uint64_t window, unsigned level)
{
	if (level == 0)
		return true;
	uint64_t x = window ^ UINT64_C(0x6c6f63616c697479); /* "locality": apart from other hashes */
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return level >= 64 ? x == 0 : (x >> (64 - level)) == 0;
}

static inline uint64_t prefix_of(const uint8_t *fp)
{
	uint64_t p;
	memcpy(&p, fp, 8);
	return p;
}

/* Consecutive recorded positions of one window: prefixes pfx[off .. off + n). */
struct seg {
	uint64_t pos;
	uint64_t off;
	uint32_t n;
};

/* A window's resolved records: first position per block, UINT64_MAX where none. */
struct win {
	uint64_t number;
	uint64_t *firsts;
};

struct loc_recorder {
	pthread_mutex_t lock;
	size_t fl;
	unsigned level;          /* raised by the reader, read by the hashers (atomics) */
	struct seg *segs;
	size_t nseg, segcap;
	uint64_t *pfx;
	size_t npfx, pfxcap;
	/* resolution: the distinct recorded prefixes, sorted, their first positions, and a
	 * directory by their top bits */
	uint64_t *keys, *kfirst;
	size_t nkeys;
	uint32_t *dir;
	unsigned dbits;
	struct win *wins;        /* sorted by number */
	size_t nwin, wincap;
};

struct loc_local {
	struct loc_recorder *r;
	struct seg *segs;
	size_t nseg, segcap;
	uint64_t *pfx;
	size_t npfx, pfxcap;
	size_t compact_at;
};

struct loc_recorder *loc_recorder_new(size_t fp_len)
{
	struct loc_recorder *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	r->fl = fp_len;
	return r;
}

static void free_resolution(struct loc_recorder *r)
{
	free(r->keys);
	free(r->kfirst);
	free(r->dir);
	r->keys = r->kfirst = NULL;
	r->dir = NULL;
	r->nkeys = 0;
}

void loc_recorder_free(struct loc_recorder *r)
{
	if (!r)
		return;
	free(r->segs);
	free(r->pfx);
	free_resolution(r);
	for (size_t i = 0; i < r->nwin; i++)
		free(r->wins[i].firsts);
	free(r->wins);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

void loc_recorder_advance(struct loc_recorder *r, uint64_t end)
{
	unsigned level = loc_level_for(end);
	if (level > __atomic_load_n(&r->level, __ATOMIC_RELAXED))
		__atomic_store_n(&r->level, level, __ATOMIC_RELAXED);
}

/* ---- a hashing thread's records ---- */

struct loc_local *loc_local_new(struct loc_recorder *r)
{
	struct loc_local *l = calloc(1, sizeof *l);
	if (l) {
		l->r = r;
		l->compact_at = (size_t)LOC_WINDOW;
	}
	return l;
}

void loc_local_free(struct loc_local *l)
{
	if (!l)
		return;
	free(l->segs);
	free(l->pfx);
	free(l);
}

static int reserve(void **p, size_t *cap, size_t need, size_t each)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 64;
	while (ncap < need)
		ncap *= 2;
	void *np = realloc(*p, ncap * each);
	if (!np)
		return -1;
	*p = np;
	*cap = ncap;
	return 0;
}

/* Drops the segments of windows no longer selected at level (the stream outgrew them). */
static void compact(struct loc_local *l, unsigned level)
{
	size_t ns = 0, np = 0;
	for (size_t i = 0; i < l->nseg; i++) {
		struct seg s = l->segs[i];
		if (!loc_window_selected(s.pos >> LOC_WINDOW_SHIFT, level))
			continue;
		memmove(l->pfx + np, l->pfx + s.off, s.n * sizeof *l->pfx);
		s.off = np;
		np += s.n;
		l->segs[ns++] = s;
	}
	l->nseg = ns;
	l->npfx = np;
}

int loc_local_record(struct loc_local *l, const uint8_t *fps, size_t n, uint64_t pos)
{
	unsigned level = __atomic_load_n(&l->r->level, __ATOMIC_RELAXED);
	size_t fl = l->r->fl;
	if (l->npfx >= l->compact_at) {
		compact(l, level);
		l->compact_at = l->npfx * 2 > LOC_WINDOW ? l->npfx * 2 : LOC_WINDOW;
	}
	for (size_t i = 0; i < n;) {
		uint64_t w = (pos + i) >> LOC_WINDOW_SHIFT;
		size_t end = (size_t)(((w + 1) << LOC_WINDOW_SHIFT) - pos);
		if (end > n)
			end = n;
		if (loc_window_selected(w, level)) {
			size_t k = end - i;
			if (reserve((void **)&l->segs, &l->segcap, l->nseg + 1, sizeof *l->segs) ||
			    reserve((void **)&l->pfx, &l->pfxcap, l->npfx + k, sizeof *l->pfx))
				return -1;
			l->segs[l->nseg++] = (struct seg){pos + i, l->npfx, (uint32_t)k};
			for (size_t j = 0; j < k; j++)
				l->pfx[l->npfx++] = prefix_of(fps + (i + j) * fl);
		}
		i = end;
	}
	return 0;
}

int loc_local_flush(struct loc_local *l)
{
	struct loc_recorder *r = l->r;
	int rc = 0;
	compact(l, __atomic_load_n(&r->level, __ATOMIC_RELAXED));
	pthread_mutex_lock(&r->lock);
	if (reserve((void **)&r->segs, &r->segcap, r->nseg + l->nseg, sizeof *r->segs) ||
	    reserve((void **)&r->pfx, &r->pfxcap, r->npfx + l->npfx, sizeof *r->pfx)) {
		rc = -1;
	} else {
		for (size_t i = 0; i < l->nseg; i++) {
			struct seg s = l->segs[i];
			s.off += r->npfx;
			r->segs[r->nseg++] = s;
		}
		if (l->npfx) /* memcpy from a NULL source is undefined even for 0 bytes */
			memcpy(r->pfx + r->npfx, l->pfx, l->npfx * sizeof *r->pfx);
		r->npfx += l->npfx;
	}
	pthread_mutex_unlock(&r->lock);
	loc_local_free(l);
	return rc;
}

/* ---- resolution ---- */

/* Sorts n 64-bit keys (LSD radix, 16-bit digits: 4 passes; qsort took a third of the end phase). */
static int sort_u64(uint64_t *a, size_t n)
{
	uint64_t *tmp = malloc(n * sizeof *tmp);
	size_t *count = calloc(65536, sizeof *count);
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return -1;
	}
	uint64_t *src = a, *dst = tmp;
	for (int shift = 0; shift < 64; shift += 16) {
		memset(count, 0, 65536 * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(src[i] >> shift) & 0xffff]++;
		size_t sum = 0;
		for (size_t d = 0; d < 65536; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 0xffff]++] = src[i];
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	/* four passes: the result is back in a */
	free(tmp);
	free(count);
	return 0;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int loc_resolve_begin(struct loc_recorder *r)
{
	free_resolution(r);
	if (!r->npfx)
		return 0;
	if (!(r->keys = malloc(r->npfx * sizeof *r->keys)))
		return -1;
	memcpy(r->keys, r->pfx, r->npfx * sizeof *r->keys);
	if (sort_u64(r->keys, r->npfx)) {
		free_resolution(r);
		return -1;
	}
	size_t n = 0;
	for (size_t i = 0; i < r->npfx; i++)
		if (!n || r->keys[n - 1] != r->keys[i])
			r->keys[n++] = r->keys[i];
	r->nkeys = n;
	r->dbits = 1;
	while (r->dbits < 24 && ((size_t)1 << r->dbits) < n)
		r->dbits++;
	size_t nd = ((size_t)1 << r->dbits) + 1;
	if (!(r->kfirst = malloc(n * sizeof *r->kfirst)) || !(r->dir = malloc(nd * sizeof *r->dir))) {
		free_resolution(r);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		r->kfirst[i] = UINT64_MAX;
	size_t k = 0;
	for (size_t b = 0; b < nd; b++) {
		while (k < n && (r->keys[k] >> (64 - r->dbits)) < b)
			k++;
		r->dir[b] = (uint32_t)k;
	}
	return 0;
}

static size_t key_slot(const struct loc_recorder *r, uint64_t p)
{
	uint64_t b = p >> (64 - r->dbits);
	for (uint32_t i = r->dir[b]; i < r->dir[b + 1]; i++) {
		if (r->keys[i] == p)
			return i;
		if (r->keys[i] > p)
			break;
	}
	return SIZE_MAX;
}

void loc_resolve_visit(struct loc_recorder *r, const uint8_t *fp, uint64_t first)
{
	if (!r->nkeys)
		return;
	size_t i = key_slot(r, prefix_of(fp));
	/* Two contents sharing a 64-bit prefix: the earlier first wins, whatever the walk order. */
	if (i != SIZE_MAX && first < r->kfirst[i])
		r->kfirst[i] = first;
}

static struct win *window(struct loc_recorder *r, uint64_t number)
{
	size_t lo = 0, hi = r->nwin;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->wins[mid].number < number)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < r->nwin && r->wins[lo].number == number)
		return &r->wins[lo];
	uint64_t *f = malloc(LOC_WINDOW * sizeof *f);
	if (!f || reserve((void **)&r->wins, &r->wincap, r->nwin + 1, sizeof *r->wins)) {
		free(f);
		return NULL;
	}
	for (size_t i = 0; i < LOC_WINDOW; i++)
		f[i] = UINT64_MAX;
	memmove(r->wins + lo + 1, r->wins + lo, (r->nwin - lo) * sizeof *r->wins);
	r->wins[lo] = (struct win){number, f};
	r->nwin++;
	return &r->wins[lo];
}

int loc_resolve_end(struct loc_recorder *r)
{
	int rc = 0;
	if (r->nseg)
		qsort(r->segs, r->nseg, sizeof *r->segs, cmp_seg);
	struct win *w = NULL;
	for (size_t i = 0; i < r->nseg && !rc; i++) {
		const struct seg *s = &r->segs[i];
		uint64_t number = s->pos >> LOC_WINDOW_SHIFT;
		if ((!w || w->number != number) && !(w = window(r, number))) {
			rc = -1;
			break;
		}
		for (uint32_t j = 0; j < s->n; j++) {
			size_t k = key_slot(r, r->pfx[s->off + j]);
			/* a block whose count was dropped (an unreadable range) resolves to nothing */
			w->firsts[(s->pos + j) & (LOC_WINDOW - 1)] = k == SIZE_MAX ? UINT64_MAX : r->kfirst[k];
		}
	}
	free_resolution(r);
	free(r->segs);
	free(r->pfx);
	r->segs = NULL;
	r->pfx = NULL;
	r->nseg = r->segcap = r->npfx = r->pfxcap = 0;
	return rc;
}

int loc_load_window(struct loc_recorder *r, uint64_t number, const uint64_t *firsts)
{
	struct win *w = window(r, number);
	if (!w)
		return -1;
	for (size_t i = 0; i < LOC_WINDOW; i++)
		if (firsts[i] != UINT64_MAX)
			w->firsts[i] = firsts[i];
	return 0;
}

/* ---- the runs ---- */

struct runs {
	struct dist_locality *out;
	uint64_t zero;               /* the zero block's first position */
	bool have_prev, prev_dup, prev_zero, kind_dup;
	uint64_t prev_pos, prev_first;
	uint64_t kind_len, copy_len, zero_len;
};

static void hist_add(struct dist_len_hist *h, uint64_t len)
{
	if (!len)
		return;
	int k = 63 - __builtin_clzll(len);
	if (k >= DIST_LEN_BINS)
		k = DIST_LEN_BINS - 1; /* cannot happen below 2^48 blocks */
	h->count[k]++;
	h->blocks[k] += len;
}

static void close_all(struct runs *t)
{
	hist_add(t->kind_dup ? &t->out->dup_runs : &t->out->new_runs, t->kind_len);
	hist_add(&t->out->copy_runs, t->copy_len);
	hist_add(&t->out->zero_runs, t->zero_len);
	t->kind_len = t->copy_len = t->zero_len = 0;
	t->have_prev = false;
}

static void push(struct runs *t, uint64_t pos, uint64_t first)
{
	bool brk = !t->have_prev || pos != t->prev_pos + 1;
	if (brk)
		close_all(t);
	bool dup = first < pos, zero = dup && first == t->zero;
	bool next = !brk && t->prev_dup && first == t->prev_first + 1; /* sequential */
	t->out->analysed++;
	t->out->duplicates += dup;
	t->out->sequential += dup && next;
	if (t->kind_len && dup == t->kind_dup) {
		t->kind_len++;
	} else {
		hist_add(t->kind_dup ? &t->out->dup_runs : &t->out->new_runs, t->kind_len);
		t->kind_dup = dup;
		t->kind_len = 1;
	}
	if (dup && !zero) {
		if (t->copy_len && !t->prev_zero && next) {
			t->copy_len++;
		} else {
			hist_add(&t->out->copy_runs, t->copy_len);
			t->copy_len = 1;
		}
	} else {
		hist_add(&t->out->copy_runs, t->copy_len);
		t->copy_len = 0;
	}
	if (zero) {
		t->zero_len++;
	} else {
		hist_add(&t->out->zero_runs, t->zero_len);
		t->zero_len = 0;
	}
	t->have_prev = true;
	t->prev_pos = pos;
	t->prev_first = first;
	t->prev_dup = dup;
	t->prev_zero = zero;
}

void loc_runs(const uint64_t *firsts, size_t n, uint64_t start, uint64_t piece_len, uint64_t zero_first,
	      struct dist_locality *out)
{
	struct runs t = {.out = out, .zero = zero_first};
	for (size_t i = 0; i < n; i++) {
		uint64_t pos = start + i;
		if (piece_len && pos % piece_len == 0)
			close_all(&t);
		if (firsts[i] != UINT64_MAX)
			push(&t, pos, firsts[i]);
	}
	close_all(&t);
	out->present = true;
	if (piece_len > out->window)
		out->window = piece_len;
}

int loc_compute(struct loc_recorder *r, uint64_t stream_blocks, uint64_t zero_first, struct dist_locality *out)
{
	unsigned level = loc_level_for(stream_blocks);
	size_t kept = 0;
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < r->nwin; i++) {
		if (loc_window_selected(r->wins[i].number, level))
			r->wins[kept++] = r->wins[i];
		else
			free(r->wins[i].firsts);
	}
	r->nwin = kept;
	struct runs t = {.out = out, .zero = zero_first};
	for (size_t i = 0; i < r->nwin; i++) {
		const struct win *w = &r->wins[i];
		if (level)
			close_all(&t); /* runs end at window edges */
		for (size_t j = 0; j < LOC_WINDOW; j++)
			if (w->firsts[j] != UINT64_MAX)
				push(&t, w->number << LOC_WINDOW_SHIFT | j, w->firsts[j]);
	}
	close_all(&t);
	out->window = level ? LOC_WINDOW : 0;
	out->present = true;
	return 0;
}

int loc_each_window(const struct loc_recorder *r, loc_window_fn fn, void *arg)
{
	for (size_t i = 0; i < r->nwin; i++) {
		int rc = fn(r->wins[i].number, r->wins[i].firsts, arg);
		if (rc)
			return rc;
	}
	return 0;
}

void loc_add(struct dist_locality *out, const struct dist_locality *add)
{
	if (!add->present)
		return;
	struct dist_len_hist *o[4] = {&out->new_runs, &out->dup_runs, &out->copy_runs, &out->zero_runs};
	const struct dist_len_hist *a[4] = {&add->new_runs, &add->dup_runs, &add->copy_runs, &add->zero_runs};
	for (int k = 0; k < 4; k++) {
		for (int b = 0; b < DIST_LEN_BINS; b++) {
			o[k]->count[b] += a[k]->count[b];
			o[k]->blocks[b] += a[k]->blocks[b];
		}
	}
	out->analysed += add->analysed;
	out->duplicates += add->duplicates;
	out->sequential += add->sequential;
	if (add->window > out->window)
		out->window = add->window;
	out->present = true;
}
