/* fetch.c - a stored content by its address: a whole block read from the chunk store, or a packed
 * fragment read and extracted; below the write path, recovery and fsck, which all read contents. */
#include <errno.h>
#include "reference-engine/engine-int.h"

int engine_read_addr(struct engine *e, uint64_t addr, void *buf)
{
	if (!space_valid(&e->space, addr))
		return -EIO;
	if (!addr_packed(addr))
		return store_read(&e->store, addr_pbn(addr), buf);
	int rc = store_read(&e->store, addr_pbn(addr), e->scratch2);
	return rc ? rc : packer_extract(e->sb.block_size, e->scratch2, addr_slot(addr), addr_len(addr), buf);
}
