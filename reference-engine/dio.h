/* dio.h - the engine's I/O to its durable files (map, journal, chunk store): full transfers, and
 * an optional recorder that sees every write and sync in issue order (the power-loss harness). */
#ifndef DEDIS_ENGINE_DIO_H
#define DEDIS_ENGINE_DIO_H

#include <stddef.h>
#include <stdint.h>
#include "reference-engine/engine.h"

/* Durable file numbers as the recorder names them. */
#define DIO_MAP 0
#define DIO_JOURNAL 1
#define DIO_DATA0 2 /* data.<i> is DIO_DATA0 + i */

int dio_write(const struct engine_recorder *r, unsigned file, int fd, const void *buf, size_t len, uint64_t off);
int dio_read(int fd, void *buf, size_t len, uint64_t off);
int dio_sync(const struct engine_recorder *r, unsigned file, int fd);

#endif
