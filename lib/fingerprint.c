/* fingerprint.c - sha1 / sha256 block fingerprints through OpenSSL EVP: the digest is fetched
 * once and one EVP_MD_CTX is reused for every block. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "lib/fingerprint.h"

struct fp_ctx {
	EVP_MD_CTX *ctx;
	EVP_MD *fetched; /* owned (OpenSSL 3), NULL with the 1.1 static digests */
	const EVP_MD *md;
	size_t len;
	const char *name;
};

static const char *const known[] = {"sha1", "sha256"};

struct fp_ctx *fp_new(const char *name)
{
	const char *canon = NULL;
	struct fp_ctx *c;

	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcasecmp(name, known[i]) == 0)
			canon = known[i];
	if (!canon || !(c = calloc(1, sizeof *c)))
		return NULL;
	c->name = canon;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
	c->fetched = EVP_MD_fetch(NULL, canon, NULL);
	c->md = c->fetched;
#else
	c->md = EVP_get_digestbyname(canon);
#endif
	if (!c->md)
		goto fail;
	int size = EVP_MD_size(c->md);
	if (size <= 0 || size > FP_MAX_LEN)
		goto fail;
	c->len = (size_t)size;
	if (!(c->ctx = EVP_MD_CTX_new()))
		goto fail;
	return c;
fail:
	fp_free(c);
	return NULL;
}

size_t fp_len(const struct fp_ctx *c)
{
	return c->len;
}

const char *fp_name(const struct fp_ctx *c)
{
	return c->name;
}

int fp_hash(struct fp_ctx *c, const void *data, size_t len, uint8_t *out)
{
	unsigned int n = 0;

#if OPENSSL_VERSION_NUMBER >= 0x30000000L
	if (EVP_DigestInit_ex2(c->ctx, c->md, NULL) != 1)
		return -1;
#else
	if (EVP_DigestInit_ex(c->ctx, c->md, NULL) != 1)
		return -1;
#endif
	if (EVP_DigestUpdate(c->ctx, data, len) != 1)
		return -1;
	if (EVP_DigestFinal_ex(c->ctx, out, &n) != 1 || n != c->len)
		return -1;
	return 0;
}

void fp_free(struct fp_ctx *c)
{
	if (!c)
		return;
	EVP_MD_CTX_free(c->ctx);
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
	EVP_MD_free(c->fetched);
#endif
	free(c);
}
