/* volclaim.h - which existing engine volumes dedisbench may write (or read without --force): one
 * it marked at the end of its last run there, unwritten since, or whose every block is its own. */
#ifndef DEDIS_BENCH_VOLCLAIM_H
#define DEDIS_BENCH_VOLCLAIM_H

#include "bench/target/claim.h"

/* Inspect the volume in dir (dir_fd: its directory, held). CLAIM_EMPTY: nothing mapped;
 * CLAIM_OURS: the mark (CLAIM_XATTR on the directory) still describes it (the volume's write
 * count and its directory's mtime unchanged since the mark), else every mapped block read back
 * through the engine is a dedisbench block (any seed); CLAIM_FOREIGN: data dedisbench did not
 * write; CLAIM_UNREADABLE: it could not be opened or read (*err, an errno). `how` as claim_inspect. */
enum claim_verdict volclaim_inspect(const char *dir, int dir_fd, const char **how, int *err);

/* Mark the volume as written by dedisbench as it is now (best effort: without xattr support the
 * blocks tell). Call after the run's last open of the volume has closed. */
void volclaim_mark(const char *dir, int dir_fd);

#endif
