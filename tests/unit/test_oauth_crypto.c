/*
 * Tests for OAuth's cryptography: base64url (RFC 4648 section 5), the
 * PKCE S256 challenge against RFC 7636 Appendix B's example, fresh
 * verifiers (length, alphabet, no repeats), and client assertions signed
 * with ES256 and RS256 keys made here, whose signatures are verified with
 * OpenSSL (ES256's R || S form rebuilt into DER first).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oauth/oauth_crypto.h"

static void
test_b64url(void **state)
{
    char *s;

    (void)state;
    s = oauth_crypto_b64url((const unsigned char *)"\xfb\xff\xfe", 3);
    assert_string_equal(s, "-__-");
    free(s);
    s = oauth_crypto_b64url((const unsigned char *)"ab", 2);
    assert_string_equal(s, "YWI");          /* no padding */
    free(s);
    s = oauth_crypto_b64((const unsigned char *)"id:secret", 9);
    assert_string_equal(s, "aWQ6c2VjcmV0");
    free(s);
}

static void
test_pkce_rfc7636_example(void **state)
{
    char *c;

    (void)state;
    c = oauth_crypto_s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
    assert_string_equal(c, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    free(c);
}

static void
test_verifier(void **state)
{
    char *a = oauth_crypto_token(), *b = oauth_crypto_token();

    (void)state;
    assert_non_null(a);
    assert_non_null(b);
    /* RFC 7636 section 4.1: 43..128 unreserved characters. */
    assert_int_equal(strlen(a), 43);
    assert_int_equal(strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
        "qrstuvwxyz0123456789-._~"), 43);
    assert_string_not_equal(a, b);
    free(a);
    free(b);
}

/* Write a fresh key of type (EVP_PKEY_EC P-256 or RSA 2048) to a temp
 * file; the key stays in *out for verification. */
static char *
write_key(int type, EVP_PKEY **out)
{
    EVP_PKEY *k = type == EVP_PKEY_EC ?
        EVP_EC_gen("P-256") : EVP_RSA_gen(2048);
    char      path[] = "/tmp/mcptop-test-key.XXXXXX";
    int       fd = mkstemp(path);
    FILE     *f = fdopen(fd, "w");

    assert_non_null(k);
    assert_non_null(f);
    assert_int_equal(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL),
        1);
    fclose(f);
    *out = k;
    return strdup(path);
}

/* Decode base64url (for checking). */
static unsigned char *
b64url_decode(const char *s, size_t n, size_t *len)
{
    char          *t = calloc(1, n + 4);
    unsigned char *out = calloc(1, n + 4);
    size_t         m = n;
    int            got;

    memcpy(t, s, n);
    for (size_t i = 0; i < n; i++)
        t[i] = t[i] == '-' ? '+' : t[i] == '_' ? '/' : t[i];
    while (m % 4 != 0)
        t[m++] = '=';
    got = EVP_DecodeBlock(out, (unsigned char *)t, (int)m);
    assert_true(got >= 0);
    *len = (size_t)got - (m - n);
    free(t);
    return out;
}

/* Verify jwt with k; the header must name alg. */
static void
verify_jwt(const char *jwt, EVP_PKEY *k, const char *alg)
{
    const char    *d1 = strchr(jwt, '.'), *d2;
    unsigned char *sig, *hdr;
    size_t         siglen, hlen;
    EVP_MD_CTX    *md = EVP_MD_CTX_new();
    char           want[64];
    int            ok;

    assert_non_null(d1);
    d2 = strchr(d1 + 1, '.');
    assert_non_null(d2);
    hdr = b64url_decode(jwt, (size_t)(d1 - jwt), &hlen);
    snprintf(want, sizeof(want), "{\"alg\":\"%s\",\"typ\":\"JWT\"}", alg);
    assert_int_equal(hlen, strlen(want));
    assert_memory_equal(hdr, want, hlen);
    free(hdr);
    sig = b64url_decode(d2 + 1, strlen(d2 + 1), &siglen);
    if (EVP_PKEY_get_base_id(k) == EVP_PKEY_EC) {
        /* JWS R || S back to DER for OpenSSL. */
        ECDSA_SIG     *es = ECDSA_SIG_new();
        unsigned char *der = NULL;
        int            dlen;

        assert_int_equal(siglen, 64);
        ECDSA_SIG_set0(es, BN_bin2bn(sig, 32, NULL),
            BN_bin2bn(sig + 32, 32, NULL));
        dlen = i2d_ECDSA_SIG(es, &der);
        free(sig);
        sig = malloc((size_t)dlen);
        memcpy(sig, der, (size_t)dlen);
        siglen = (size_t)dlen;
        OPENSSL_free(der);
        ECDSA_SIG_free(es);
    }
    assert_int_equal(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, k),
        1);
    ok = EVP_DigestVerify(md, sig, siglen, (const unsigned char *)jwt,
        (size_t)(d2 - jwt));
    assert_int_equal(ok, 1);
    EVP_MD_CTX_free(md);
    free(sig);
}

static void
test_jwt_es256(void **state)
{
    EVP_PKEY *k;
    char     *path = write_key(EVP_PKEY_EC, &k), *cause = NULL, *jwt;

    (void)state;
    jwt = oauth_crypto_jwt(path, "ES256", "{\"iss\":\"c\"}", &cause);
    assert_non_null(jwt);
    verify_jwt(jwt, k, "ES256");
    free(jwt);
    /* The algorithm from the key when not given. */
    jwt = oauth_crypto_jwt(path, NULL, "{}", &cause);
    assert_non_null(jwt);
    verify_jwt(jwt, k, "ES256");
    free(jwt);
    /* An EC key cannot sign RS256. */
    assert_null(oauth_crypto_jwt(path, "RS256", "{}", &cause));
    assert_non_null(strstr(cause, "not a key for RS256"));
    free(cause);
    unlink(path);
    free(path);
    EVP_PKEY_free(k);
}

static void
test_jwt_rs256(void **state)
{
    EVP_PKEY *k;
    char     *path = write_key(EVP_PKEY_RSA, &k), *cause = NULL, *jwt;

    (void)state;
    jwt = oauth_crypto_jwt(path, "RS256", "{\"aud\":\"https://as\"}",
        &cause);
    assert_non_null(jwt);
    verify_jwt(jwt, k, "RS256");
    free(jwt);
    assert_null(oauth_crypto_jwt(path, "ES256", "{}", &cause));
    free(cause);
    unlink(path);
    free(path);
    EVP_PKEY_free(k);
}

static void
test_jwt_bad_files(void **state)
{
    char  path[] = "/tmp/mcptop-test-key.XXXXXX";
    int   fd = mkstemp(path);
    char *cause = NULL;

    (void)state;
    assert_int_equal(write(fd, "not a key\n", 10), 10);
    close(fd);
    assert_null(oauth_crypto_jwt(path, NULL, "{}", &cause));
    assert_non_null(strstr(cause, "not a PEM private key"));
    free(cause);
    cause = NULL;
    unlink(path);
    assert_null(oauth_crypto_jwt(path, NULL, "{}", &cause));
    assert_non_null(strstr(cause, "No such file"));
    free(cause);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_b64url),
        cmocka_unit_test(test_pkce_rfc7636_example),
        cmocka_unit_test(test_verifier),
        cmocka_unit_test(test_jwt_es256),
        cmocka_unit_test(test_jwt_rs256),
        cmocka_unit_test(test_jwt_bad_files),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
