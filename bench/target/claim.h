/* claim.h - which existing files dedisbench may overwrite: those it marked when it took them (an
 * extended attribute) or whose blocks it recognises as its own; anything else needs --force. */
#ifndef DEDIS_BENCH_CLAIM_H
#define DEDIS_BENCH_CLAIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Set on every file dedisbench creates or takes over, where the filesystem keeps user xattrs. */
#define CLAIM_XATTR "user.dedis.run"

enum claim_verdict {
	CLAIM_OURS,       /* every non-zero sector lies in a dedisbench block (any seed), or, for a
	                   * run that only reads, the file carries the mark */
	CLAIM_EMPTY,      /* no data at all: holes or zeros only, nothing to lose */
	CLAIM_FOREIGN,    /* data dedisbench did not write */
	CLAIM_UNREADABLE, /* could not be read to tell (errno kept in *err) */
};

/* Inspect an existing regular file open for reading, as far as a run uses it: its first `extent`
 * bytes. A run that writes (to_write) reads all of its data there (holes skipped), mark or no mark;
 * a run that only reads takes a file carrying the mark as it is. `how` (may be NULL) gets a short
 * phrase ("its blocks are dedisbench's", ...) for messages. */
enum claim_verdict claim_inspect(int fd, uint64_t extent, bool to_write, const char **how, int *err);

/* The rule claim_inspect applies to a file's data, for data read another way (an engine
 * volume's blocks, through the engine): buf holds len bytes (a multiple of 512) from a MiB
 * boundary of the data. CLAIM_FOREIGN, CLAIM_OURS (data, all of it dedisbench's) or CLAIM_EMPTY. */
enum claim_verdict claim_window(const void *buf, size_t len);

/* Mark a file as written by dedisbench (best effort: without xattr support the blocks tell). */
void claim_mark(int fd);

#endif
