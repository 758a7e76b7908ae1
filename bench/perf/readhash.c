/* readhash.c - the read-and-hash floor for gen-threads.sh: N threads take a file's 4 MiB ranges in
 * turn, pread each in 128 KiB chunks and SHA-1 every block, as dedisgen's hashers do, and nothing
 * else (no index, no analysis). What any tool spends to fingerprint the file, data from memory.
 *
 *   cc -O2 -o readhash bench/perf/readhash.c -lcrypto -pthread
 *   readhash FILE THREADS [BLOCK_SIZE]     prints "MB/s user_s sys_s" (1e6 B/s of wall time) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RANGE (4u << 20)
#define CHUNK (128u << 10)

static int fd;
static size_t file_size, block_size = 4096, next_range;

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
		for (size_t at = off; at < end; at += CHUNK) {
			size_t want = end - at < CHUNK ? end - at : CHUNK;
			if (pread(fd, chunk, want, (off_t)at) != (ssize_t)want)
				abort();
			for (size_t k = 0; k + block_size <= want; k += block_size)
				if (EVP_DigestInit_ex2(ctx, md, NULL) != 1 || EVP_DigestUpdate(ctx, chunk + k, block_size) != 1 ||
				    EVP_DigestFinal_ex(ctx, digest, &len) != 1)
					abort();
		}
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
		fprintf(stderr, "usage: readhash FILE THREADS [BLOCK_SIZE]\n");
		return 2;
	}
	int n = atoi(argv[2]);
	if (argc > 3)
		block_size = strtoul(argv[3], NULL, 10);
	if (n < 1 || n > 1024 || block_size < 512 || CHUNK % block_size) {
		fprintf(stderr, "readhash: THREADS 1 to 1024, BLOCK_SIZE a power of two from 512 to 128 KiB\n");
		return 2;
	}
	file_size = (size_t)st.st_size;
	pthread_t t[1024];
	struct rusage r;
	double t0 = now_s();
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, hasher, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	double wall = now_s() - t0;
	getrusage(RUSAGE_SELF, &r);
	printf("%.1f %.2f %.2f\n", (double)file_size / wall / 1e6, (double)r.ru_utime.tv_sec + (double)r.ru_utime.tv_usec / 1e6,
	       (double)r.ru_stime.tv_sec + (double)r.ru_stime.tv_usec / 1e6);
	return 0;
}
