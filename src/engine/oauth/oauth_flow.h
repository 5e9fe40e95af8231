/*
 * The inside of the oauth module, shared by its two files: oauth.c (the
 * API, the token held, challenges, waiting requests) and oauth_flow.c (one
 * flow's HTTP steps: refresh, discovery, client identity, the grants).
 * Nothing outside src/engine/oauth*.c includes this.
 */
#ifndef MCPTOP_ENGINE_OAUTH_FLOW_H
#define MCPTOP_ENGINE_OAUTH_FLOW_H

#include <ev.h>
#include <stdbool.h>
#include <stdio.h>

#include "engine/oauth.h"
#include "oauth/oauth_challenge.h"
#include "engine/oauth_store.h"

struct http_xfer;
struct oauth_doc;
struct oauth_listen;

#define OAUTH_CANDIDATES      4
#define OAUTH_DEFAULT_WAIT_MS 300000L

enum oauth_step {
    OAUTH_RESUME,           /* nothing to fetch: resume on the next turn */
    OAUTH_REFRESH,          /* refresh_token grant */
    OAUTH_PRM,              /* protected resource metadata */
    OAUTH_AS,               /* authorization server metadata */
    OAUTH_REGISTER,         /* dynamic client registration */
    OAUTH_CONSENT,          /* waiting for the browser's redirect */
    OAUTH_TOKEN,            /* the grant's token request */
    OAUTH_ROTATED,          /* a refresh token found spent: waiting a
                               little for the process that spent it to
                               write its new pair to the token file */
};

struct oauth_waiter {
    struct oauth_waiter *next;
    oauth_resume_cb      cb;
    void                *arg;
};

struct oauth_flow {
    struct oauth        *o;
    enum oauth_step      step;
    unsigned             rotated_looks;         /* OAUTH_ROTATED: reads */
    char                *rotated_why;           /* ...and the failure to
                                                   report if none comes */
    bool                 full_after_refresh;    /* on refresh failure */
    bool                 step_up;
    bool                 background;            /* a refresh ahead of
                                                   expiry */
    char                *challenge_scope;
    char                *prm_hint;              /* resource_metadata */
    char                *cand[OAUTH_CANDIDATES];
    size_t               ncand, at;
    bool                 legacy;                /* no PRM: 2025-03-26 */
    char                *resource_indicator;
    char                *prm_scopes;
    char                *issuer;
    bool                 have_as;               /* metadata was found */
    struct oauth_doc    *as;
    char                *authorization_endpoint;
    char                *token_endpoint;
    char                *registration_endpoint;
    char                *client_id;
    char                *client_secret;
    char                *auth_method;
    char                *scope;                 /* requested */
    char                *verifier;
    char                *state;
    struct oauth_listen *listen;
    struct http_xfer    *xfer;
    bool                 xfer_token;            /* xfer is a token request */
    ev_timer             timer;
};

struct oauth {
    struct ev_loop             *loop;
    struct curlev              *ce;
    const struct config_server *decl;
    size_t                      pool_key;
    FILE                       *log;
    char                       *name;           /* sanitized, for text;
                                                   NULL until the work
                                                   needs it (oauth_facts),
                                                   as origin and resource */
    char                       *origin;         /* the server's origin */
    char                       *resource;       /* canonical server URI */
    struct oauth_token          tok;
    bool                        have_tok;
    bool                        loaded;
    char                       *authz;          /* "Bearer ..." */
    struct oauth_flow          *flow;
    struct oauth_waiter        *waiters;        /* on the flow */
    struct oauth_waiter        *resuming;       /* being resumed now */
    char                        detail[320];
    ev_tstamp                   failed_at;      /* 0: the last flow ok */
    ev_tstamp                   token_at;       /* obtained here, or 0 */
    unsigned                    step_ups;
    ev_tstamp                   step_up_at;
};

/* oauth.c, for the flow. */
const struct oauth_consent *oauth_consent_get(void);
void oauth_log(const struct oauth *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
enum config_oauth_grant oauth_grant(const struct oauth *o);
/* The exact command that gets o a token: "mcptop login NAME -c FILE"
 * (-c when the server was declared in a file; the path quoted for a shell
 * where it needs it), into buf. */
void oauth_login_hint(const struct oauth *o, char *buf, size_t n);
/* Can a flow get a token from nothing (no refresh token)? */
bool oauth_can_grant(const struct oauth *o);
/*
 * A refresh found its refresh token spent (invalid_grant): read the token
 * file again under its lock, and take the entry's tokens when another
 * process has refreshed meanwhile (its access token differs from o's).
 * True when taken: the flow has succeeded after all.
 */
bool oauth_take_rotated(struct oauth *o);
/* Is every space-separated scope of want in have? */
bool oauth_scope_covers(const char *have, const char *want);
/* a and b as one space-separated list without repeats (caller frees;
 * NULL when both are empty). */
char *oauth_scope_union(const char *a, const char *b);
/* Hold t (a copy; without its tokens unless `tokens`), or nothing. */
void oauth_set_token(struct oauth *o, const struct oauth_token *t,
    bool tokens);
/* Write t to the token file (failures are logged). */
void oauth_save(struct oauth *o, const struct oauth_token *t);
/* End f (freed here) and resume every waiting request once; on failure
 * the text becomes the detail oauth_explain appends. */
void oauth_finish(struct oauth_flow *f, bool ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* oauth_flow.c */
/* A new flow at step, the challenge's scope and metadata URL copied (c
 * may be NULL); o->flow is set to it. */
struct oauth_flow *oauth_flow_new(struct oauth *o, enum oauth_step step,
    const struct oauth_challenge *c);
/* Abort what runs and free (no resume). */
void oauth_flow_free(struct oauth_flow *f);
/* Discovery from the protected resource metadata on, then the grant. */
void oauth_flow_start_prm(struct oauth_flow *f);
/* A refresh_token grant with what o holds. */
void oauth_flow_start_refresh(struct oauth_flow *f);
/* OAUTH_ROTATED: look for another process's new pair (see the .c). */
void oauth_flow_rotated(struct oauth_flow *f);
/* (Re)arm the flow's one timer. */
void oauth_flow_arm(struct oauth_flow *f, double seconds);

#endif
