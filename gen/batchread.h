/* batchread.h - reading a batch of small files with many opens and reads in flight (io_uring:
 * open, read, close linked per file), for a hashing thread; plain system calls where it is absent. */
#ifndef DEDIS_GEN_BATCHREAD_H
#define DEDIS_GEN_BATCHREAD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One file to read: up to `size` bytes of `path` into buf. The reader fills got (bytes read: less
 * than size when the file held less), err (0, or the errno of the step that failed, with
 * what = "cannot open" or "read error") and plain (batch_reader_read only: the file was read with
 * system calls after all, because the kernel did not run its open or read, or the ring failed). */
struct batch_item {
	const char *path;
	uint8_t *buf;
	size_t size;
	size_t got;
	int err;
	const char *what;
	bool plain;
};

struct batch_reader;

/* A reader for one thread: NULL when io_uring cannot be used here (no kernel support, forbidden,
 * out of memory); the caller then reads with system calls (batch_read_sync). */
struct batch_reader *batch_reader_new(void);
void batch_reader_free(struct batch_reader *br);
/* Reads every item, up to 64 files at once. A file whose open or read the kernel could not run
 * (-ECANCELED when no worker thread can be created, as under a pids limit) is read with system
 * calls. 0, or -1 when the ring itself failed: the items it had not finished are then read with
 * system calls before returning, so the caller still gets every item read; from then on the
 * reader reads everything with system calls and returns -1 (free it). */
int batch_reader_read(struct batch_reader *br, struct batch_item *items, size_t n);
/* Test seam: every cancel_every-th open or read completes as -cancel_errno (the rest of its chain
 * as -ECANCELED), and the fail_after-th wait on the ring fails (-ENOMEM) after submitting; 0: off. */
void batch_reader_inject(struct batch_reader *br, unsigned cancel_every, int cancel_errno, unsigned fail_after);
/* Test seam: requests handed to the kernel whose completion the reader has not consumed (0 after
 * every batch_reader_read: none may still write into the caller's buffers). */
unsigned long batch_reader_unreaped(struct batch_reader *br);
/* The same with one open, read(s) and close per file. */
void batch_read_sync(struct batch_item *items, size_t n);

#endif
