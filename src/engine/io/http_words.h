/*
 * The server's own words in an HTTP answer's body (engine-private; used by
 * the transports' judges and by oauth/): a short sentence that is not
 * markup ("Session not found", "Access is only allowed at localhost:7113")
 * is the server speaking, and a page has a <title>. Untrusted bytes in,
 * sanitized text out; nothing here knows MCP or libcurl.
 */
#ifndef MCPTOP_ENGINE_HTTP_WORDS_H
#define MCPTOP_ENGINE_HTTP_WORDS_H

#include <stddef.h>

/* The most characters of a body's text shown (a title: HTTP_WORDS_TITLE). */
#define HTTP_WORDS_MAX   200
#define HTTP_WORDS_TITLE 120

enum http_words_kind {
    HTTP_WORDS_NONE,    /* nothing to say: no body, JSON, binary, blank */
    HTTP_WORDS_TEXT,    /* a body that is not markup: its text */
    HTTP_WORDS_PAGE,    /* markup without a usable <title> */
    HTTP_WORDS_TITLED,  /* markup: its <title> */
};

/*
 * What len bytes of body say. The judgement is the body's, not its
 * Content-Type's (Express labels a plain sentence text/html): a body
 * whose first non-blank byte is '<' is markup; one that opens like JSON,
 * or whose content type is JSON, says nothing here (its readers judge
 * it); one with a NUL or many control bytes is binary. out (size n, always
 * NUL-terminated) gets the text or the title: sanitized (escape sequences
 * and control characters dropped), runs of white space folded to one
 * space, at most max characters (capped at HTTP_WORDS_MAX, a title at
 * HTTP_WORDS_TITLE), "..." ending one that was cut. Reads at most the
 * first 64 KiB.
 */
enum http_words_kind http_words(const char *body, size_t len,
    const char *content_type, char *out, size_t n, size_t max);

/*
 * Append the words to a failure's detail at detail + off (dsz in all),
 * leaving `reserve` bytes free for what a caller adds after: `; the
 * server says "..."`, `; an HTML page titled "..."` or `; an HTML page`;
 * nothing when there is nothing to say or no room. Returns the new
 * length (off when nothing was added).
 */
size_t http_words_append(char *detail, size_t dsz, size_t off,
    size_t reserve, const char *body, size_t len, const char *content_type);

#endif
