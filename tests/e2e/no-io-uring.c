/* no-io-uring.c - test helper: run a command as if the kernel had no io_uring (ENOSYS) or forbade
 * it (EPERM), with a seccomp filter that fails io_uring_setup; exits 77 where seccomp is absent. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

#define SKIP 77

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "ENOSYS") && strcmp(argv[1], "EPERM"))) {
		fprintf(stderr, "usage: no-io-uring ENOSYS|EPERM COMMAND [ARG]...\n");
		return 2;
	}
#if !defined(NATIVE_ARCH) || !defined(__NR_io_uring_setup)
	fprintf(stderr, "no-io-uring: unknown architecture\n");
	return SKIP;
#else
	unsigned err = strcmp(argv[1], "ENOSYS") ? EPERM : ENOSYS;
	struct sock_filter filter[] = {
		/* Another system call ABI than ours: leave it alone. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof filter / sizeof filter[0], .filter = filter};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		fprintf(stderr, "no-io-uring: cannot install a seccomp filter: %s\n", strerror(errno));
		return SKIP;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "no-io-uring: %s: %s\n", argv[2], strerror(errno));
	return 127;
#endif
}
