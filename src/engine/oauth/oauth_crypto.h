/*
 * The cryptography an OAuth client needs, on OpenSSL's libcrypto: random
 * values from the OS CSPRNG, base64 and base64url (RFC 4648), PKCE (RFC
 * 7636 section 4: a 43-character verifier, its S256 challenge) and the
 * signed JWT of private_key_jwt client authentication (RFC 7523 section
 * 2.2; RFC 7515 compact JWS with ES256 or RS256, RFC 7518 section 3).
 * Nothing here logs; key material never leaves this file.
 */
#ifndef MCPTOP_ENGINE_OAUTH_CRYPTO_H
#define MCPTOP_ENGINE_OAUTH_CRYPTO_H

#include <stddef.h>

/* n bytes from the OS CSPRNG. 0, or -1 when it cannot deliver. */
int oauth_crypto_random(unsigned char *buf, size_t n);

/* base64url without padding. Caller frees. */
char *oauth_crypto_b64url(const unsigned char *p, size_t n);

/* Standard base64 with padding (for HTTP Basic). Caller frees. */
char *oauth_crypto_b64(const unsigned char *p, size_t n);

/* A fresh random token of 32 bytes, base64url (43 characters): a PKCE
 * code verifier, a state, a jti. Caller frees; NULL when the CSPRNG
 * fails. */
char *oauth_crypto_token(void);

/* The S256 code challenge of a verifier: base64url(SHA-256(verifier)).
 * Caller frees. */
char *oauth_crypto_s256(const char *verifier);

/*
 * Sign claims_json (a JSON object text) as a compact JWS with the private
 * key in key_file (PEM: PKCS#8, SEC1 or PKCS#1). alg is "ES256" (a P-256
 * key) or "RS256" (an RSA key), or NULL to take it from the key. Returns
 * the JWT (caller frees), or NULL with *cause (caller frees; it names the
 * file, never key bytes).
 */
char *oauth_crypto_jwt(const char *key_file, const char *alg,
    const char *claims_json, char **cause);

#endif
