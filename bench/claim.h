/* claim.h - which existing files dedisbench may overwrite: those it marked when it took them (an
 * extended attribute) or whose blocks it recognises as its own; anything else needs --force. */
#ifndef DEDIS_BENCH_CLAIM_H
#define DEDIS_BENCH_CLAIM_H

#include <stdbool.h>
#include <stddef.h>

/* Set on every file dedisbench creates or takes over, where the filesystem keeps user xattrs. */
#define CLAIM_XATTR "user.dedis.run"

enum claim_verdict {
	CLAIM_OURS,       /* every non-zero sector looked at lies in a dedisbench block (any seed) */
	CLAIM_EMPTY,      /* no data at all: holes or zeros only, nothing to lose */
	CLAIM_FOREIGN,    /* data dedisbench did not write */
	CLAIM_UNREADABLE, /* could not be read to tell (errno kept in *err) */
};

/* Inspect an existing regular file open for reading. `how` (may be NULL) gets a short phrase
 * ("marked by dedisbench", "its blocks are dedisbench's", ...) for messages. Reads up to 64 MiB
 * of its data whole (holes skipped), then 64 KiB windows at up to 4096 MiB boundaries; a file
 * carrying the mark only its first MiB and 64 windows. */
enum claim_verdict claim_inspect(int fd, const char **how, int *err);

/* Mark a file as written by dedisbench (best effort: without xattr support the blocks tell). */
void claim_mark(int fd);

#endif
