/*
 * Diagnostic only (not part of any measured figure in the main tables):
 * LD_PRELOAD shim that sets CURLOPT_DNS_CACHE_TIMEOUT -1 on every easy
 * handle mcptop creates, to measure what that one option would change in
 * the engine without touching src/.
 *
 * build: cc -O2 -shared -fPIC -o dns_forever.so dns_forever.c -ldl
 * use:   LD_PRELOAD=./dns_forever.so mcptop check ...
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <dlfcn.h>

CURL *
curl_easy_init(void)
{
    static CURL *(*real)(void);
    CURL        *e;

    if (real == NULL)
        real = (CURL *(*)(void))dlsym(RTLD_NEXT, "curl_easy_init");
    e = real();
    if (e != NULL)
        curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, -1L);
    return e;
}
