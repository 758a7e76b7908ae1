/* readhash.c - the read-and-hash floor for gen-threads.sh: N threads take a file's 4 MiB ranges in
 * turn, pread each in 128 KiB chunks and SHA-1 every block, as dedisgen's hashers do, and nothing
 * else (no index, no analysis). What any tool spends to fingerprint the file, data from memory.
 *
 *   cc -O2 -o readhash bench/perf/readhash.c -lcrypto -pthread
 *   readhash FILE THREADS [BLOCK_SIZE [METHOD]]   prints "MB/s user_s sys_s" (1e6 B/s of wall time)
 * METHOD: pread (the default, as above); range: each 4 MiB range mapped, hashed in place and
 * unmapped; populate: the same with MAP_POPULATE; file: the whole file mapped once and unmapped at
 * the end, both timed (reading with no mapping calls between the ranges). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RANGE (4u << 20)
#define CHUNK (128u << 10)

static int fd;
static size_t file_size, block_size = 4096, next_range;
static enum { BY_PREAD, BY_RANGE, BY_POPULATE, BY_FILE } method;
static const unsigned char *whole_file;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *hasher(void *arg)
{
	(void)arg;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	EVP_MD *md = EVP_MD_fetch(NULL, "SHA1", NULL);
	unsigned char *chunk = aligned_alloc(4096, CHUNK), digest[EVP_MAX_MD_SIZE];
	unsigned int len;
	size_t off;
	if (!ctx || !md || !chunk)
		abort();
	while ((off = __atomic_fetch_add(&next_range, RANGE, __ATOMIC_RELAXED)) < file_size) {
		size_t end = file_size - off < RANGE ? file_size : off + RANGE;
		const unsigned char *mapped = NULL;
		if (method == BY_FILE)
			mapped = whole_file + off;
		else if (method != BY_PREAD) {
			void *m = mmap(NULL, end - off, PROT_READ, MAP_SHARED | (method == BY_POPULATE ? MAP_POPULATE : 0), fd,
				       (off_t)off);
			if (m == MAP_FAILED)
				abort();
			mapped = m;
		}
		for (size_t at = off; at < end; at += CHUNK) {
			size_t want = end - at < CHUNK ? end - at : CHUNK;
			const unsigned char *data = mapped ? mapped + (at - off) : chunk;
			if (!mapped && pread(fd, chunk, want, (off_t)at) != (ssize_t)want)
				abort();
			for (size_t k = 0; k + block_size <= want; k += block_size)
				if (EVP_DigestInit_ex2(ctx, md, NULL) != 1 || EVP_DigestUpdate(ctx, data + k, block_size) != 1 ||
				    EVP_DigestFinal_ex(ctx, digest, &len) != 1)
					abort();
		}
		if (mapped && method != BY_FILE)
			munmap((void *)mapped, end - off);
	}
	free(chunk);
	EVP_MD_free(md);
	EVP_MD_CTX_free(ctx);
	return NULL;
}

int main(int argc, char **argv)
{
	struct stat st;
	if (argc < 3 || (fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &st)) {
		fprintf(stderr, "usage: readhash FILE THREADS [BLOCK_SIZE [METHOD]]\n");
		return 2;
	}
	int n = atoi(argv[2]);
	if (argc > 3)
		block_size = strtoul(argv[3], NULL, 10);
	static const char *const methods[] = {"pread", "range", "populate", "file"};
	if (argc > 4) {
		method = 99;
		for (int i = 0; i < 4; i++)
			if (!strcmp(argv[4], methods[i]))
				method = i;
	}
	if (n < 1 || n > 1024 || block_size < 512 || CHUNK % block_size || (unsigned)method > BY_FILE) {
		fprintf(stderr, "readhash: THREADS 1 to 1024, BLOCK_SIZE a power of two from 512 to 128 KiB, METHOD "
				"pread, range, populate or file\n");
		return 2;
	}
	file_size = (size_t)st.st_size;
	pthread_t t[1024];
	struct rusage r;
	double t0 = now_s();
	if (method == BY_FILE &&
	    (whole_file = mmap(NULL, file_size, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		perror("readhash: mmap");
		return 1;
	}
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, hasher, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (method == BY_FILE)
		munmap((void *)whole_file, file_size);
	double wall = now_s() - t0;
	getrusage(RUSAGE_SELF, &r);
	printf("%.1f %.2f %.2f\n", (double)file_size / wall / 1e6, (double)r.ru_utime.tv_sec + (double)r.ru_utime.tv_usec / 1e6,
	       (double)r.ru_stime.tv_sec + (double)r.ru_stime.tv_usec / 1e6);
	return 0;
}
