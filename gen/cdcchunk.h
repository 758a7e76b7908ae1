/* cdcchunk.h - a FastCDC-style content-defined chunker: gear hash over the last 64 bytes,
 * normalised chunking (a strict mask before the average size, a loose one after), min and max. */
#ifndef DEDIS_GEN_CDCCHUNK_H
#define DEDIS_GEN_CDCCHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CDC_AVG_DEFAULT 8192u
#define CDC_AVG_MIN 256u
#define CDC_AVG_MAX (1u << 24)

/* The chunker's parameters: avg a power of two in [CDC_AVG_MIN, CDC_AVG_MAX]; min = avg / 2,
 * max = avg * 8 (4 / 8 / 64 KiB at 8 KiB: borg's default minimum and maximum; a larger minimum
 * than FastCDC's avg / 4 also leaves more bytes unhashed). The masks have log2(avg) + 2 (strict) and
 * log2(avg) - 2 (loose) bits, the loose ones a subset of the strict ones, spread over the hash's
 * upper bits (bit j of the gear hash depends on the last j + 1 bytes: the high bits see all 64). */
struct cdc_params {
	uint32_t avg, min, max;
	uint64_t mask_strict, mask_loose;
};

/* The gear table (256 words from lib/rng, fixed seed: the same chunks in every run and build). */
extern const uint64_t *cdc_gear(void);
/* Fills p for avg (a power of two in range): 0, or -1. */
int cdc_params_init(struct cdc_params *p, uint32_t avg);

/* The length of the chunk starting at data (n bytes left, > 0): the first position i >= min - 1
 * (0-based, the chunk's last byte) whose gear hash of bytes i - 63 .. i has the strict mask's bits
 * all zero while i + 1 < avg, the loose mask's after; max, or n when fewer are left. *tail gets the
 * gear hash of the chunk's last (up to 64) bytes: the same for every copy of the chunk. */
size_t cdc_next(const struct cdc_params *p, const uint8_t *data, size_t n, uint64_t *tail);

/* The same search, resumable across buffers: a chunk of which `done` bytes were scanned (*h the
 * hash after them, 0 at done 0) goes on over up to n bytes of data. Returns how many of them the
 * chunk takes and sets *cut when it ends there (a cut or max); otherwise all n were taken, and
 * *h and done + n resume it. */
size_t cdc_scan(const struct cdc_params *p, uint64_t *h, size_t done, const uint8_t *data, size_t n, bool *cut);

#endif
