/* dioalign.h - the file-offset alignment O_DIRECT needs on a path: a run whose block size is not
 * a multiple of it fails with EINVAL on its first transfer, so the tools refuse it up front. */
#ifndef DEDIS_DIOALIGN_H
#define DEDIS_DIOALIGN_H

/* For a regular file, a directory (its files to come) or a block device: what the kernel reports
 * for it (statx STATX_DIOALIGN), else the logical sector size of the block device its file
 * system lives on, else 512 (a file system on no block device, which falls back or refuses
 * O_DIRECT itself). */
unsigned dio_align(const char *path);

#endif
