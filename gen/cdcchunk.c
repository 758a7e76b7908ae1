/* cdcchunk.c - the FastCDC-style chunker: its gear table from the project's PRNG, its masks, and
 * the cut search (the hash is rolled only from min - 64 on: the bytes before cannot matter). */
#include <pthread.h>
#include <string.h>
#include "lib/rng.h"
#include "gen/cdcchunk.h"

#define GEAR_SEED UINT64_C(0x6465646973636463) /* "dediscdc": any fixed value does */
#define WINDOW 64

static uint64_t gear[256];
static pthread_once_t gear_once = PTHREAD_ONCE_INIT;

static void gear_fill(void)
{
	struct rng r;
	rng_seed(&r, GEAR_SEED);
	for (int i = 0; i < 256; i++)
		gear[i] = rng_next(&r);
}

const uint64_t *cdc_gear(void)
{
	pthread_once(&gear_once, gear_fill);
	return gear;
}

/* `bits` bits from bit 63 down, 3 apart (15 strict bits reach bit 21: a window of 43+ bytes). */
static uint64_t spread_mask(int bits)
{
	uint64_t m = 0;
	for (int k = 0; k < bits; k++)
		m |= UINT64_C(1) << (63 - 3 * k);
	return m;
}

int cdc_params_init(struct cdc_params *p, uint32_t avg)
{
	if (avg < CDC_AVG_MIN || avg > CDC_AVG_MAX || (avg & (avg - 1)))
		return -1;
	int b = __builtin_ctz(avg);
	p->avg = avg;
	p->min = avg / 2;
	p->max = avg * 8;
	p->mask_strict = spread_mask(b + 2);
	p->mask_loose = spread_mask(b - 2);
	/* roll() skips zeros at the hash's fixed point: it must not be a cut (it is not, for this
	 * table: a cut there would make every chunk of zeros its minimum) */
	uint64_t zero_fixed = 0 - cdc_gear()[0];
	if (!(zero_fixed & p->mask_strict) || !(zero_fixed & p->mask_loose))
		return -1;
	return 0;
}

/* The gear hash of the last min(n, 64) bytes before end. */
static uint64_t tail_hash(const uint8_t *end, size_t n)
{
	uint64_t h = 0;
	for (size_t i = n < WINDOW ? n : WINDOW; i > 0; i--)
		h = (h << 1) + gear[end[-(ptrdiff_t)i]];
	return h;
}

/* Rolls bytes [i, end) of d into *h untested (the bytes before the first tested position). */
static void roll_only(const uint8_t *d, size_t i, size_t end, uint64_t *h)
{
	uint64_t x = *h;
	for (; i < end; i++)
		x = (x << 1) + gear[d[i]];
	*h = x;
}

/* Rolls bytes [i, end) of d into *h, testing each against mask. Returns the index of the first
 * byte whose hash passes (a cut there), or end. Unrolled by four, with a pointer that the cut's
 * index is computed from only when one is found (an index kept per byte cost a fifth of the
 * loop's instructions: four a byte now, and the loop is bound by them, not by the hash's one-lea
 * chain, so FastCDC 2020's two bytes a step, 4h + 2g0 + g1 with 2h + g0 tested beside it, ran a
 * fifth slower on an AMD EPYC: one more instruction a pair). Runs of zero bytes, once the hash
 * has reached its fixed point on them (-gear[0]: 2h + gear[0] = h), are skipped eight at a time:
 * the hash stays there, and that value never passes the masks (cdc_params_init checks). */
static size_t roll_test(const uint8_t *d, size_t i, size_t end, uint64_t *h, uint64_t mask)
{
	const uint64_t zero_fixed = 0 - gear[0];
	const uint8_t *at = d + i, *stop = d + end;
	uint64_t x = *h;
	while (stop - at >= 4) {
		if (x == zero_fixed) {
			uint64_t w;
			while (stop - at >= 8 && (memcpy(&w, at, 8), w == 0))
				at += 8;
			if (stop - at < 4)
				break;
		}
		x = (x << 1) + gear[at[0]];
		if (!(x & mask))
			goto cut;
		x = (x << 1) + gear[at[1]];
		if (!(x & mask))
			goto cut1;
		x = (x << 1) + gear[at[2]];
		if (!(x & mask))
			goto cut2;
		x = (x << 1) + gear[at[3]];
		if (!(x & mask))
			goto cut3;
		at += 4;
	}
	for (; at < stop; at++) {
		x = (x << 1) + gear[*at];
		if (!(x & mask))
			goto cut;
	}
	*h = x;
	return end;
cut3:
	at++;
cut2:
	at++;
cut1:
	at++;
cut:
	*h = x;
	return (size_t)(at - d);
}

size_t cdc_scan(const struct cdc_params *p, uint64_t *h, size_t done, const uint8_t *data, size_t n, bool *cut)
{
	/* chunk positions: [0, min - 64) unseen, [.., min - 1) rolled, then tested: strict below
	 * avg - 1, loose from there to max - 1, where the chunk ends whatever the hash */
	const size_t bound[4] = {p->min - WINDOW, p->min - 1, p->avg - 1, p->max - 1};
	const uint64_t mask[4] = {0, 0, p->mask_strict, p->mask_loose};
	size_t i = 0;
	*cut = false;
	if (done < bound[0])
		i = bound[0] - done < n ? bound[0] - done : n;
	for (int phase = 1; phase < 4 && i < n; phase++) {
		size_t pos = done + i;
		if (pos >= bound[phase])
			continue;
		size_t end = bound[phase] - pos < n - i ? i + (bound[phase] - pos) : n;
		size_t at = end;
		if (mask[phase])
			at = roll_test(data, i, end, h, mask[phase]);
		else
			roll_only(data, i, end, h);
		if (at < end) {
			*cut = true;
			return at + 1;
		}
		i = end;
	}
	if (i < n) { /* at max - 1: the chunk ends there whatever the hash */
		*h = (*h << 1) + gear[data[i]];
		*cut = true;
		return i + 1;
	}
	return n;
}

size_t cdc_next(const struct cdc_params *p, const uint8_t *data, size_t n, uint64_t *tail)
{
	uint64_t h = 0;
	bool cut;
	size_t k = cdc_scan(p, &h, 0, data, n, &cut);
	*tail = cut || n >= p->min ? h : tail_hash(data + n, n);
	return k;
}
