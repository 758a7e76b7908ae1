/* registry.c - the target kinds, in the order --target is matched against them (adding a kind is
 * one X(kind) line here plus its own target_KIND.c defining target_KIND_ops, and its build line). */
#include "bench/target/target.h"

/* The first kind whose match says yes takes --target: engine:DIR and null by their spelling,
 * then block device, file and directory by what stat(2) says. */
#define TARGET_KINDS(X) \
	X(engine) \
	X(null) \
	X(blockdev) \
	X(file) \
	X(dir)

#define DECLARE(kind) extern const struct target_ops target_##kind##_ops;
TARGET_KINDS(DECLARE)
#define ENTRY(kind) &target_##kind##_ops,
const struct target_ops *const target_kinds[] = {TARGET_KINDS(ENTRY)};

const size_t target_kind_count = sizeof target_kinds / sizeof target_kinds[0];
