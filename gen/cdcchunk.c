/* cdcchunk.c - the FastCDC-style chunker: its gear table from the project's PRNG, its masks, and
 * the cut search (the hash is rolled only from min - 64 on: the bytes before cannot matter). */
#include <pthread.h>
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
	p->min = avg / 4;
	p->max = avg * 8;
	p->mask_strict = spread_mask(b + 2);
	p->mask_loose = spread_mask(b - 2);
	(void)cdc_gear();
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

size_t cdc_scan(const struct cdc_params *p, uint64_t *h, size_t done, const uint8_t *data, size_t n, bool *cut)
{
	/* chunk positions: [0, min - 64) unseen, [.., min - 1) rolled, then tested: strict below
	 * avg - 1, loose from there to max - 1, where the chunk ends whatever the hash */
	size_t roll = p->min - WINDOW, first = p->min - 1, normal = p->avg - 1, last = p->max - 1;
	size_t i = 0, pos = done;
	uint64_t x = *h;
	*cut = false;
	if (pos < roll) {
		size_t skip = roll - pos < n ? roll - pos : n;
		i += skip;
		pos += skip;
	}
	for (; i < n && pos < first; i++, pos++)
		x = (x << 1) + gear[data[i]];
	for (; i < n && pos < normal; i++, pos++) {
		x = (x << 1) + gear[data[i]];
		if (!(x & p->mask_strict))
			goto cut;
	}
	for (; i < n && pos < last; i++, pos++) {
		x = (x << 1) + gear[data[i]];
		if (!(x & p->mask_loose))
			goto cut;
	}
	if (i < n) { /* pos == last: max reached */
		x = (x << 1) + gear[data[i]];
		goto cut;
	}
	*h = x;
	return n;
cut:
	*h = x;
	*cut = true;
	return i + 1;
}

size_t cdc_next(const struct cdc_params *p, const uint8_t *data, size_t n, uint64_t *tail)
{
	uint64_t h = 0;
	bool cut;
	size_t k = cdc_scan(p, &h, 0, data, n, &cut);
	*tail = cut || n >= p->min ? h : tail_hash(data + n, n);
	return k;
}
