/*
 * OpenSSL behind the few operations OAuth needs. An ECDSA signature comes
 * out of OpenSSL DER-encoded; JWS wants R || S as two 32-byte big-endian
 * integers (RFC 7518 section 3.4), so it is converted here.
 */
#include "oauth/oauth_crypto.h"

#include <errno.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"
#include "util/str.h"
#include "util/xmalloc.h"

int
oauth_crypto_random(unsigned char *buf, size_t n)
{
    return RAND_bytes(buf, (int)n) == 1 ? 0 : -1;
}

char *
oauth_crypto_b64(const unsigned char *p, size_t n)
{
    char *out = xmalloc(4 * ((n + 2) / 3) + 1);

    EVP_EncodeBlock((unsigned char *)out, p, (int)n);
    return out;
}

char *
oauth_crypto_b64url(const unsigned char *p, size_t n)
{
    char  *out = oauth_crypto_b64(p, n);
    size_t len = strlen(out);

    while (len > 0 && out[len - 1] == '=')
        out[--len] = '\0';
    for (size_t i = 0; i < len; i++) {
        if (out[i] == '+')
            out[i] = '-';
        else if (out[i] == '/')
            out[i] = '_';
    }
    return out;
}

char *
oauth_crypto_token(void)
{
    unsigned char b[32];
    char         *t;

    if (oauth_crypto_random(b, sizeof(b)) != 0)
        return NULL;
    t = oauth_crypto_b64url(b, sizeof(b));
    OPENSSL_cleanse(b, sizeof(b));
    return t;
}

char *
oauth_crypto_s256(const char *verifier)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int  mdlen = 0;

    if (EVP_Digest(verifier, strlen(verifier), md, &mdlen, EVP_sha256(),
        NULL) != 1)
        return NULL;
    return oauth_crypto_b64url(md, mdlen);
}

/* Read a private key from a PEM file. NULL with *cause. */
static EVP_PKEY *
oauth_crypto_key(const char *path, char **cause)
{
    const char *why;
    FILE       *f = file_fopen_regular(path, &why);   /* never a wait */
    EVP_PKEY   *k;

    if (f == NULL) {
        *cause = str_printf("private key file %s: %s", path, why);
        return NULL;
    }
    k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    if (k == NULL)
        *cause = str_printf("private key file %s: not a PEM private key",
            path);
    return k;
}

/* DER ECDSA signature to JWS R || S (each size bytes). 0 or -1. */
static int
oauth_crypto_ecdsa_raw(const unsigned char *der, size_t derlen,
    unsigned char *out, int size)
{
    const unsigned char *p = der;
    ECDSA_SIG           *sig = d2i_ECDSA_SIG(NULL, &p, (long)derlen);
    const BIGNUM        *r, *s;
    int                  rc = -1;

    if (sig == NULL)
        return -1;
    ECDSA_SIG_get0(sig, &r, &s);
    if (BN_bn2binpad(r, out, size) == size &&
        BN_bn2binpad(s, out + size, size) == size)
        rc = 0;
    ECDSA_SIG_free(sig);
    return rc;
}

char *
oauth_crypto_jwt(const char *key_file, const char *alg,
    const char *claims_json, char **cause)
{
    EVP_PKEY      *key = oauth_crypto_key(key_file, cause);
    EVP_MD_CTX    *md = NULL;
    unsigned char *sig = NULL, raw[64];
    size_t         siglen = 0;
    char          *header = NULL, *h64 = NULL, *c64 = NULL, *input = NULL;
    char          *s64 = NULL, *jwt = NULL;
    int            type;
    char           hdr[64];

    if (key == NULL)
        return NULL;
    type = EVP_PKEY_get_base_id(key);
    if (alg == NULL)
        alg = type == EVP_PKEY_EC ? "ES256" : "RS256";
    if (strcmp(alg, "ES256") == 0 ? (type != EVP_PKEY_EC ||
        EVP_PKEY_get_bits(key) != 256) :
        strcmp(alg, "RS256") == 0 ? type != EVP_PKEY_RSA : true) {
        *cause = str_printf("private key file %s: not a key for %s",
            key_file, strcmp(alg, "ES256") == 0 || strcmp(alg, "RS256") == 0
            ? alg : "an algorithm mcptop signs with (ES256, RS256)");
        goto out;
    }
    snprintf(hdr, sizeof(hdr), "{\"alg\":\"%s\",\"typ\":\"JWT\"}", alg);
    header = xstrdup(hdr);
    h64 = oauth_crypto_b64url((const unsigned char *)header, strlen(header));
    c64 = oauth_crypto_b64url((const unsigned char *)claims_json,
        strlen(claims_json));
    input = str_printf("%s.%s", h64, c64);
    md = EVP_MD_CTX_new();
    if (md == NULL || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL,
        key) != 1 || EVP_DigestSign(md, NULL, &siglen,
        (const unsigned char *)input, strlen(input)) != 1) {
        *cause = str_printf("private key file %s: cannot sign", key_file);
        goto out;
    }
    sig = xmalloc(siglen);
    if (EVP_DigestSign(md, sig, &siglen, (const unsigned char *)input,
        strlen(input)) != 1) {
        *cause = str_printf("private key file %s: cannot sign", key_file);
        goto out;
    }
    if (type == EVP_PKEY_EC) {
        if (oauth_crypto_ecdsa_raw(sig, siglen, raw, 32) != 0) {
            *cause = str_printf("private key file %s: cannot sign",
                key_file);
            goto out;
        }
        s64 = oauth_crypto_b64url(raw, sizeof(raw));
    } else {
        s64 = oauth_crypto_b64url(sig, siglen);
    }
    jwt = str_printf("%s.%s", input, s64);
out:
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(key);
    free(sig);
    free(header);
    free(h64);
    free(c64);
    free(input);
    free(s64);
    return jwt;
}
