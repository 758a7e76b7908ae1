/* registry.c - the target kinds, in the order --target is matched against them (adding a kind is
 * one line here plus its own target_KIND.c). */
#include "bench/target/target.h"

const struct target_ops *const target_kinds[] = {
	&target_engine_ops,   /* engine:DIR[,OPTION=VALUE]... */
	&target_null_ops,     /* null */
	&target_blockdev_ops, /* what stat(2) says, from here */
	&target_file_ops,
	&target_dir_ops,
};

const size_t target_kind_count = sizeof target_kinds / sizeof target_kinds[0];
