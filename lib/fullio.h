/* fullio.h - read(2) and write(2) of a whole buffer: past short transfers (pipes, signals) and
 * EINTR, so a caller sees all of it or an error. */
#ifndef DEDIS_FULLIO_H
#define DEDIS_FULLIO_H

#include <stddef.h>

/* 0 once all n bytes are written; -1 with errno (EIO where write wrote nothing and said nothing). */
int fullio_write(int fd, const void *p, size_t n);
/* 0 once all n bytes are read; -1 with errno, or -1 with errno 0 at an early end of file. */
int fullio_read(int fd, void *p, size_t n);

#endif
