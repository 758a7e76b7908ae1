/* verify.c - ledger storage and the read check: a block must hold exactly the content last
 * written there (or zeros if never written), identified from its bytes. */
#include <stdio.h>
#include <sys/mman.h>
#include "verify.h"

int ledger_init(struct ledger *l, uint64_t nblocks)
{
	size_t len = (nblocks ? nblocks : 1) * sizeof *l->ids;
	l->ids = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (l->ids == MAP_FAILED) {
		l->ids = NULL;
		return -1;
	}
	l->nblocks = nblocks;
	return 0;
}

void ledger_free(struct ledger *l)
{
	if (l->ids)
		munmap(l->ids, (l->nblocks ? l->nblocks : 1) * sizeof *l->ids);
	l->ids = NULL;
}

void verify_block(const struct ledger *l, const struct content_gen *g, uint64_t block, const void *buf,
		  struct verify_result *r)
{
	r->expected_written = ledger_get(l, block, &r->expected_id);
	r->found = content_identify(g, buf, &r->found_id);
	if (!r->expected_written)
		r->ok = r->found == CONTENT_IS_ZERO;
	else if (r->expected_id == CONTENT_ZERO)
		r->ok = r->found == CONTENT_IS_ZERO;
	else
		r->ok = r->found == CONTENT_IS_VALID && r->found_id == r->expected_id;
}

void verify_describe(const struct verify_result *r, char *buf, size_t len)
{
	char want[48], got[48];
	if (!r->expected_written || r->expected_id == CONTENT_ZERO)
		snprintf(want, sizeof want, "zeros");
	else
		snprintf(want, sizeof want, "content 0x%llx", (unsigned long long)r->expected_id);
	if (r->found == CONTENT_IS_ZERO)
		snprintf(got, sizeof got, "zeros");
	else if (r->found == CONTENT_IS_VALID)
		snprintf(got, sizeof got, "content 0x%llx", (unsigned long long)r->found_id);
	else
		snprintf(got, sizeof got, "garbage");
	snprintf(buf, len, "expected %s, found %s", want, got);
}
