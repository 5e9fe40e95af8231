/*
 * The versions of the libraries the engine runs on, as each library
 * reports itself at run time (what is really linked, not the headers it
 * was built against): libcurl and its TLS backend, libev, cJSON.
 */
#ifndef MCPTOP_ENGINE_VERSION_H
#define MCPTOP_ENGINE_VERSION_H

struct engine_versions {
    const char *curl;       /* "7.88.1" */
    const char *curl_tls;   /* "OpenSSL/3.0.15"; NULL when built without */
    int         ev_major;   /* 4 */
    int         ev_minor;   /* 33 */
    const char *cjson;      /* "1.7.15" */
};

/* Fill v. The strings are static, owned by the libraries. Never fails. */
void engine_versions(struct engine_versions *v);

#endif
