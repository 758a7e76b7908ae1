/* batch-uring-probe.c - test helper: exits 0 when dedisgen's batch reader can use io_uring here
 * (the same setup the hashers try), 77 when the kernel, seccomp or a sysctl refuses it. */
#include <stdio.h>
#include "gen/batchread.h"

int main(void)
{
	struct batch_reader *br = batch_reader_new();
	if (!br) {
		fprintf(stderr, "batch-uring-probe: no io_uring for batch reads here\n");
		return 77;
	}
	batch_reader_free(br);
	return 0;
}
