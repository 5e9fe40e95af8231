/*
 * The incident report of a recording (`mcptop report`): the time span;
 * each server that changed, with its timeline of health changes (when,
 * from, to, the failure kind and reason at that moment); the servers per
 * failure kind in each minute; the first failure and the last recovery;
 * the endings and their outcomes. As Markdown (tables that paste into a
 * postmortem) or JSON. Reads only the parsed recording: no clock, no
 * network.
 */
#ifndef MCPTOP_EXPORT_REPORT_H
#define MCPTOP_EXPORT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "export/recording.h"

struct cJSON;

/* One health change of a server. */
struct report_change {
    int64_t             at;
    enum health_state   was;        /* HEALTH__COUNT: the first verdict */
    enum health_state   health;
    int                 kind;       /* enum failure_kind, -1 none */
    long                http_status;
    const char         *reason;     /* the failure's reason (bad_gateway),
                                       else the health's; borrowed */
    const char         *detail;     /* the failure's detail, or "" */
};

struct report_server {
    size_t                index;    /* in the log's servers */
    struct report_change *timeline; /* in time order */
    size_t                n;
    bool                  changed;  /* more than a first verdict and
                                       what mcptop's leaving did */
    enum health_state     at_start, at_end;     /* HEALTH__COUNT: none */
};

/* Servers failing per kind in one minute [at, at + 60 s). */
struct report_bucket {
    int64_t minute;
    size_t  kinds[FAILURE__COUNT];
    size_t  total;                  /* servers failing (any kind) */
};

/* An ending line, with its settlement's line when one followed. */
struct report_ending {
    const struct recording_event *ending;
    const struct recording_event *settled;  /* or NULL */
};

struct report {
    const struct recording_log *log;    /* borrowed */
    int64_t                     from, to;
    struct report_server       *servers;    /* one per log server */
    struct report_bucket       *buckets;
    size_t                      nbuckets;
    /* The first change into a failing health (down, degraded, unknown,
     * invalid), the last change out of one into ok: server index or
     * (size_t)-1. */
    size_t                      first_failure, last_recovery;
    int64_t                     first_failure_at, last_recovery_at;
    int                         first_failure_kind;
    struct report_ending       *endings;    /* in time order */
    size_t                      nendings;
    size_t                      outcomes[ENDING__COUNT];
    const struct recording_event *exit;         /* or NULL */
    int64_t                     stopping_at;    /* mcptop began to leave;
                                                   -1: not in the span */
};

/*
 * The report of log between from and to (epoch ms; -1: the recording's
 * start / end). What happened before from still sets each server's state
 * at from. Caller frees with report_free; log must outlive it.
 */
struct report *report_new(const struct recording_log *log, int64_t from,
    int64_t to);
void report_free(struct report *r);

/* Write r as Markdown; file names the recording in the heading. -1 when
 * the write failed. */
int report_markdown(FILE *out, const struct report *r, const char *file);
/* r as JSON: {"recording", "from", "to", "first_failure",
 * "last_recovery", "stopping_at", "servers": [{name, ..., "timeline": [{at, health, was,
 * kind, reason, http_status, detail}]}], "buckets", "endings",
 * "outcomes", "exit"}. Caller frees with cJSON_Delete. */
struct cJSON *report_json(const struct report *r, const char *file);

#endif
