/* store.h - the chunk store: one block per physical block number in the volume's data file,
 * read and written with pread/pwrite (O_DIRECT when asked). */
#ifndef DEDIS_ENGINE_STORE_H
#define DEDIS_ENGINE_STORE_H

#include <stdbool.h>
#include <stdint.h>

struct store {
	int fd;
	uint32_t block_size;
	uint64_t blocks;
	bool direct;
};

int store_create(const char *dir, uint32_t block_size, uint64_t blocks);
int store_open(struct store *s, const char *dir, uint32_t block_size, uint64_t blocks, bool direct);
int store_write(struct store *s, uint64_t pbn, const void *buf);
int store_read(struct store *s, uint64_t pbn, void *buf);
int store_sync(struct store *s);
void store_close(struct store *s);

#endif
