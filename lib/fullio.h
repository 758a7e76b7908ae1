/* fullio.h - read(2) and write(2) of a whole buffer: past short transfers (pipes, signals) and
 * EINTR, so a caller sees all of it or an error. */
#ifndef DEDIS_FULLIO_H
#define DEDIS_FULLIO_H

#include <stddef.h>
#include <stdint.h>

/* 0 once all n bytes are written; -1 with errno (EIO where write wrote nothing and said nothing). */
int fullio_write(int fd, const void *p, size_t n);
/* 0 once all n bytes are read; -1 with errno, or -1 with errno 0 at an early end of file. */
int fullio_read(int fd, void *p, size_t n);
/* pwrite(2) / pread(2) of all n bytes at off, resumed past short transfers and EINTR: 0, or
 * -errno; a transfer that moves nothing (past the end of a file or device) is -eof_errno, which
 * the caller picks (ENOSPC for a write past a device's end, EIO where the data must be there). */
int fullio_pwrite(int fd, const void *p, size_t n, uint64_t off, int eof_errno);
int fullio_pread(int fd, void *p, size_t n, uint64_t off, int eof_errno);

#endif
