/*
 * The session-hygiene audit (`mcptop audit`; DESIGN.md section 8): for
 * one server, a fixed battery of checks of how it ends, frees, expires
 * and leaks sessions, judged against MCP 2025-11-25 (basic/transports,
 * Session Management and Streamable HTTP; basic/lifecycle), each bounded
 * by its own timeout and each ending every session it opened (a refused
 * request's too, when its answer carried an id). The checks run one
 * after another on raw channels (engine/fleet.h, fleet_raw_*): the
 * server's monitored lifecycle is never touched.
 *
 * Each check ends in one verdict from a closed set, with its evidence
 * (statuses, counts) and the spec section it is judged against; each
 * verdict has a grade, and a server is spec-clean when no grade is bad or
 * error.
 */
#ifndef MCPTOP_AUDIT_AUDIT_H
#define MCPTOP_AUDIT_AUDIT_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct fleet;

/* The checks, in the order they are reported: id, name, the section of
 * the MCP spec each is judged against. */
#define AUDIT_CHECKS(X)                                                    \
    X(DELETE, "delete",                                                   \
        "2025-11-25 basic/transports, Session Management 5")              \
    X(FREED, "freed", "2025-11-25 basic/transports, Session Management 3")\
    X(UNKNOWN_SESSION, "unknown_session",                                 \
        "2025-11-25 basic/transports, Session Management 3")              \
    X(MISSING_SESSION, "missing_session",                                 \
        "2025-11-25 basic/transports, Session Management 2")              \
    X(PROBE_LEAK, "probe_leak",                                           \
        "2025-11-25 basic/transports, Session Management 1")              \
    X(SESSION_IDS, "session_ids",                                         \
        "2025-11-25 basic/transports, Session Management 1")              \
    X(PING, "ping", "2025-11-25 basic/utilities/ping")                    \
    X(STREAM, "stream", "2025-11-25 basic/transports, Listening for "     \
        "Messages from the Server 3")                                     \
    X(AFFINITY, "affinity",                                               \
        "2025-11-25 basic/transports, Session Management 3-4")            \
    X(VERSIONS, "versions",                                               \
        "2025-11-25 basic/lifecycle, Version Negotiation")                \
    X(ERA, "era", "2025-11-25 basic/lifecycle; 2026-07-28 "               \
        "basic/versioning, server/discover")                              \
    X(SHUTDOWN, "shutdown", "2025-11-25 basic/lifecycle, Shutdown (stdio)")

enum audit_check {
#define X(id, name, spec) AUDIT_CHECK_##id,
    AUDIT_CHECKS(X)
#undef X
    AUDIT_CHECK__COUNT
};

/* Every verdict word of every check (which check may give which, and its
 * grade there, is audit_grade's table). */
#define AUDIT_VERDICTS(X)                                                  \
    X(NA, "n/a")                /* does not apply to this server */        \
    X(ERROR, "error")           /* could not be made, or failed outright */\
    X(TERMINATED, "terminated") X(NOT_ALLOWED, "not_allowed")             \
    X(OTHER, "other") X(YES, "yes") X(NO, "no") X(SPEC, "spec")           \
    X(NONSTANDARD, "nonstandard") X(ACCEPTED, "accepted")                 \
    X(NONE, "none") X(LEAKS, "leaks") X(SUPPORTED, "supported")           \
    X(UNSUPPORTED, "unsupported") X(OPENS, "opens") X(STABLE, "stable")   \
    X(BROKEN, "broken") X(NEGOTIATES, "negotiates") X(ECHOES, "echoes")   \
    X(REFUSES, "refuses") X(LEGACY, "legacy") X(MODERN, "modern")         \
    X(LEGACY_SSE, "legacy_sse") /* 2024-11-05 HTTP+SSE, as check says */   \
    X(DUAL, "dual") X(STDIN, "stdin") X(SIGTERM, "sigterm")               \
    X(SIGKILL, "sigkill") X(UNIQUE, "unique") X(REUSED, "reused")

enum audit_verdict {
#define X(id, name) AUDIT_VERDICT_##id,
    AUDIT_VERDICTS(X)
#undef X
    AUDIT_VERDICT__COUNT
};

/* What a verdict means for an operator. */
enum audit_grade {
    AUDIT_GRADE_INVALID,    /* the check never gives this verdict */
    AUDIT_GRADE_CLEAN,      /* as the spec says */
    AUDIT_GRADE_NOTE,       /* the spec allows it; worth knowing */
    AUDIT_GRADE_BAD,        /* not as the spec says: some clients break */
    AUDIT_GRADE_ERROR,      /* the check could not be judged */
    AUDIT_GRADE_NA,         /* not applicable */
    AUDIT_GRADE__COUNT
};

/* Names ("delete", "terminated", "clean"); static strings, "?" when out
 * of range. */
const char *audit_check_name(enum audit_check c);
/* The spec section a check is judged against, with its revision
 * ("2025-11-25 basic/transports, Session Management 5"). Static. */
const char *audit_check_spec(enum audit_check c);
const char *audit_verdict_name(enum audit_verdict v);
const char *audit_grade_name(enum audit_grade g);
/* The glyph a table shows for a grade (UTF-8, one column): ✓ ◐ ✗ ? —. */
const char *audit_grade_glyph(enum audit_grade g);
/* The grade of verdict v given by check c; AUDIT_GRADE_INVALID when c
 * never gives v. */
enum audit_grade audit_grade(enum audit_check c, enum audit_verdict v);

/* One check's result. Borrowed from its audit. */
struct audit_result {
    bool               done;        /* judged (else not reached) */
    enum audit_verdict verdict;
    enum audit_grade   grade;
    char               word[24];    /* what a table cell says after the
                                       glyph: the verdict, or for versions
                                       the newest revision accepted */
    char               detail[240]; /* the evidence in words; safe to
                                       show (server text sanitized) */
    struct cJSON      *evidence;    /* statuses, counts; owned */
};

struct audit_options {
    long check_timeout_ms;          /* each check's bound; <= 0: 15000 */
};

struct audit;

/* The audit of server i of f (borrowed: both outlive it); done(arg, a)
 * is called once, from the loop, when every check is judged and every
 * session it opened has settled (or audit_stop made it stop). Never
 * NULL. */
struct audit *audit_new(struct fleet *f, size_t i,
    const struct audit_options *opt,
    void (*done)(void *arg, struct audit *a), void *arg);
/* Begin the checks (on the next loop turn). A server that cannot be
 * audited (invalid, disabled) is done at once, with no check judged. */
void audit_start(struct audit *a);
/* Interrupted: abort what is in flight, end every session opened,
 * judge nothing more; done follows once the endings settle. */
void audit_stop(struct audit *a);
/* Free (its channels too). NULL does nothing. Never from inside done. */
void audit_free(struct audit *a);

bool audit_finished(const struct audit *a);
bool audit_started(const struct audit *a);
/* Why the server was not audited ("invalid", "disabled", "interrupted"),
 * or NULL when it was. Static string. */
const char *audit_skipped(const struct audit *a);
/* The server's number in its fleet. */
size_t audit_index(const struct audit *a);
/* "http", "sse" (2024-11-05 HTTP+SSE) or "stdio": the transport the
 * checks used. */
const char *audit_transport(const struct audit *a);
const struct audit_result *audit_result(const struct audit *a,
    enum audit_check c);
/* Sessions the audit was issued, and of those how many it saw end. */
void audit_sessions(const struct audit *a, unsigned *opened,
    unsigned *ended);
/* True when the server was audited and no check is bad or error. */
bool audit_clean(const struct audit *a);

/* The JSON of one audit: {"name", "transport", "target", "clean",
 * "checks": {NAME: {"verdict", "grade", "spec", "detail", "evidence"}},
 * "audit_sessions": {"opened", "ended"}} (or "skipped" instead of the
 * checks). Caller frees with cJSON_Delete. */
struct cJSON *audit_json(const struct audit *a);

#endif
