/*
 * A recording: the event stream of a running fleet kept in a file (JSON
 * Lines, `--record FILE` on the TUI, `watch` and `serve`), for `mcptop
 * replay` and `mcptop report` after the incident.
 *
 * The file: a first line {"ts","mono_ms","event":"recording","mcptop",
 * "servers":[{name, transport, target, tags, disabled}]} (the fleet as
 * loaded, targets redacted as every output shows them), then one line per
 * engine event, each the line `watch` writes with the monotonic time it
 * was recorded at beside its wall time ("mono_ms" after "ts"), plus the
 * lines watch has none for: "state" (a server's lifecycle state with its
 * era, protocol version, tools and round trip) and, after a rotation, a
 * "server" snapshot of each server (the `check --json` record), and
 * "stopping" when mcptop begins to leave. The last line is watch's
 * "exit". Everything written is built by jsonl.c from the
 * engine's sanitized, redacted getters: no header value, token, env value
 * or URL password is ever in it.
 *
 * Writing never blocks the loop beyond a buffered fwrite: lines go into a
 * 64 KiB stdio buffer, which a 1 s timer flushes (so a crash loses at most
 * about a second); a write to a regular file that fills the buffer can
 * still wait for the kernel's page cache, never for the disk (no fsync).
 * At max_bytes the file is renamed FILE.1 (the previous FILE.1 goes) and a
 * new FILE starts with the fleet line and the snapshots (written whole: a
 * fleet whose snapshots pass half of max_bytes rotates at twice their
 * size). If FILE cannot be renamed it goes on growing, and the recording's
 * error says so.
 */
#ifndef MCPTOP_EXPORT_RECORDING_H
#define MCPTOP_EXPORT_RECORDING_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/ending.h"
#include "engine/event.h"
#include "engine/failure.h"
#include "engine/health.h"
#include "engine/server.h"

struct fleet;
struct recording;

#define RECORDING_MAX_MB_DEFAULT 100

/*
 * Open path for writing (truncated), rotated past max_bytes (> 0).
 * Nothing is written until recording_start. NULL with *cause (caller
 * frees) when it cannot be opened.
 */
struct recording *recording_open(const char *path, long long max_bytes,
    char **cause);
/* Write the fleet line and start the flush timer on loop. f is borrowed
 * and must outlive the recording (or be replaced by recording_fleet). */
void recording_start(struct recording *r, struct ev_loop *loop,
    const struct fleet *f);
/* After a reload: f is the fleet now; a new fleet line says so. */
void recording_fleet(struct recording *r, const struct fleet *f);
/* event_cb: one line per event (arg is the recording). */
void recording_event_cb(void *arg, const struct event *e);
/* mcptop begins to leave (q, a signal): every session is being ended. A
 * "stopping" line, so a report tells the exit's endings and their
 * exchanges from the incident's. */
void recording_stopping(struct recording *r);
/* The exit line (see jsonl_exit_line), the last: later events (the
 * fleet closing) are not recorded. */
void recording_exit(struct recording *r, size_t asked, size_t not_ended);
/* Why writing failed (the first failure), or NULL. Borrowed. */
const char *recording_error(const struct recording *r);
/* The file's path. Borrowed. */
const char *recording_path(const struct recording *r);
/* Flush, stop the timer, close, free. -1 when any write failed (see
 * recording_error, read before this). NULL does nothing (0). */
int recording_close(struct recording *r);

/* --- reading a recording (replay, report) ------------------------------ */

enum recording_type {
    RECORDING_EXCHANGE,
    RECORDING_LIVENESS,
    RECORDING_HEALTH,
    RECORDING_STATE,
    RECORDING_TOOLS,
    RECORDING_ENDING,
    RECORDING_SETTLED,
    RECORDING_SERVER,       /* a snapshot after a rotation */
    RECORDING_EXIT,
    RECORDING_STOPPING,     /* mcptop began to leave */
};

/* One server as the fleet lines name it. */
struct recording_server {
    char   *name;
    char   *transport;      /* "http", "stdio", "sse" */
    char   *target;         /* redacted as recorded */
    char  **tags;
    size_t  ntags;
    bool    disabled;
};

/* One line, parsed. Strings are owned by the log. */
struct recording_event {
    enum recording_type type;
    int64_t             at;         /* epoch ms (its "ts") */
    int64_t             mono_ms;    /* -1 when the line had none */
    size_t              server;     /* index in the log's servers;
                                       (size_t)-1 for exit */
    /* exchange */
    const char         *op;
    bool                completed;
    enum failure_kind   kind;
    enum delivered      delivered;
    enum failure_site   site;
    long                http_status;
    enum failure_reason reason;
    const char         *detail;
    double              ms;
    /* health (and a snapshot's); was HEALTH__COUNT: the first */
    enum health_state   health;
    enum health_state   was;
    const char         *health_reason;
    /* state (and a snapshot's) */
    enum server_state   state;
    enum mcp_era        era;
    const char         *protocol_version;
    long                tools;      /* -1 unknown */
    double              rtt_ms;     /* -1 unknown */
    /* liveness */
    enum liveness_state liveness;
    /* ending, settled: NULL for every other line */
    const struct ending *ending;    /* .server NULL; owned by the log */
    /* exit */
    long                sessions_ended, sessions_not_ended;
};

struct recording_log {
    char                    *mcptop;        /* the recording's version */
    int64_t                  started_at;    /* its first line's ts */
    struct recording_server *servers;
    size_t                   nservers;
    struct recording_event  *events;        /* in file order */
    size_t                   nevents;
    size_t                   skipped;       /* lines not understood */
    bool                     cut;           /* the last line was cut */
};

/*
 * Read the recording at path: every line understood, in order; a line cut
 * short (a crash mid-write) or not understood is skipped and counted. -1
 * with *cause (caller frees) when the file cannot be read or has no fleet
 * line; else 0 and *out (recording_log_free).
 */
int recording_read(const char *path, struct recording_log **out,
    char **cause);
/* Parse the text of a recording (len bytes), as recording_read. */
int recording_parse(const char *text, size_t len, struct recording_log **out,
    char **cause);
void recording_log_free(struct recording_log *log);

/*
 * A time on the command line (--from, --to), as epoch ms: RFC 3339
 * ("2025-01-02T03:04:05Z", ".123", "+02:00"), HH:MM[:SS] in UTC on the
 * day of day_ms (the recording's start: the recording's times are UTC),
 * or +N[s|m|h] after day_ms. -1 when it is none of these.
 */
int64_t recording_parse_time(const char *s, int64_t day_ms);
/* Parse an RFC 3339 timestamp (the "ts" of a line); -1 when invalid. */
int64_t recording_parse_iso(const char *s);

#endif
