/*
 * The recording's reader (recording.h): every line of a recording parsed
 * into a struct recording_event, servers found by name through a hash (a
 * large fleet's long recording stays linear), short strings that repeat
 * (ops, health reasons, versions) interned once. A line cut short or not
 * understood is skipped and counted: a recording cut by a crash reads to
 * its last whole line. Reads no clock.
 */
#include "export/recording.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/file.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define RECORDING_READ_MAX (1024LL * 1024 * 1024)   /* 1 GiB */

/* What parsing needs beside the log: the name hash, the interned strings,
 * the details. */
struct recording_parser {
    struct recording_log *log;
    size_t               *hash;         /* server index + 1; 0 empty */
    size_t                hcap;
    char                **interned;
    size_t                ninterned, icap;
    size_t                cap_servers, cap_events;
};

/* What the log owns beyond the servers (strings, endings): kept in the
 * log's private tail (see recording_log_free). */
struct recording_owned {
    void  **v;
    size_t  n, cap;
};

static struct recording_owned *
recording_owned(struct recording_log *log)
{
    /* Right after the log: it is allocated with room for it. */
    return (struct recording_owned *)(log + 1);
}

/* Keep p (malloc'd) until the log is freed. */
static void
recording_take(struct recording_log *log, void *p)
{
    struct recording_owned *o = recording_owned(log);

    if (o->n == o->cap) {
        o->cap = o->cap != 0 ? o->cap * 2 : 256;
        o->v = xrealloc(o->v, o->cap * sizeof(*o->v));
    }
    o->v[o->n++] = p;
}

static char *
recording_own(struct recording_log *log, const char *s)
{
    char *c = xstrdup(s);

    recording_take(log, c);
    return c;
}

/* A short string that repeats (an op, a reason): one copy for all. */
static const char *
recording_intern(struct recording_parser *p, const char *s)
{
    for (size_t i = 0; i < p->ninterned; i++) {
        if (strcmp(p->interned[i], s) == 0)
            return p->interned[i];
    }
    if (p->ninterned >= 512)        /* not short strings that repeat */
        return recording_own(p->log, s);
    if (p->ninterned == p->icap) {
        p->icap = p->icap != 0 ? p->icap * 2 : 32;
        p->interned = xrealloc(p->interned, p->icap * sizeof(char *));
    }
    p->interned[p->ninterned] = recording_own(p->log, s);
    return p->interned[p->ninterned++];
}

static uint64_t
recording_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static void
recording_hash_put(struct recording_parser *p, size_t idx)
{
    size_t i = recording_hash(p->log->servers[idx].name) & (p->hcap - 1);

    while (p->hash[i] != 0)
        i = (i + 1) & (p->hcap - 1);
    p->hash[i] = idx + 1;
}

/* The server named name; added (from its name alone) when new. */
static size_t
recording_server(struct recording_parser *p, const char *name)
{
    struct recording_log *log = p->log;
    size_t                i;

    if (p->hcap > 0) {
        i = recording_hash(name) & (p->hcap - 1);
        while (p->hash[i] != 0) {
            if (strcmp(log->servers[p->hash[i] - 1].name, name) == 0)
                return p->hash[i] - 1;
            i = (i + 1) & (p->hcap - 1);
        }
    }
    if (log->nservers == p->cap_servers) {
        p->cap_servers = p->cap_servers != 0 ? p->cap_servers * 2 : 16;
        log->servers = xrealloc(log->servers,
            p->cap_servers * sizeof(*log->servers));
    }
    memset(&log->servers[log->nservers], 0, sizeof(*log->servers));
    log->servers[log->nservers].name = xstrdup(name);
    log->servers[log->nservers].transport = xstrdup("?");
    log->servers[log->nservers].target = xstrdup("");
    log->nservers++;
    if (log->nservers * 2 > p->hcap) {
        free(p->hash);
        p->hcap = p->hcap != 0 ? p->hcap * 2 : 64;
        while (log->nservers * 2 > p->hcap)
            p->hcap *= 2;
        p->hash = xcalloc(p->hcap, sizeof(*p->hash));
        for (size_t k = 0; k < log->nservers; k++)
            recording_hash_put(p, k);
    } else {
        recording_hash_put(p, log->nservers - 1);
    }
    return log->nservers - 1;
}

static const char *
recording_str(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsString(it) ? it->valuestring : NULL;
}

static double
recording_num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsNumber(it) ? it->valuedouble : dflt;
}

static bool
recording_bool(const cJSON *o, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* name's index in a table of n names given by fn; -1 when none. */
static int
recording_enum(const char *name, int n, const char *(*fn)(int))
{
    if (name == NULL)
        return -1;
    for (int i = 0; i < n; i++) {
        if (strcmp(fn(i), name) == 0)
            return i;
    }
    return -1;
}

static const char *
recording_health_name(int i)
{
    return health_state_name((enum health_state)i);
}

static const char *
recording_state_name(int i)
{
    return server_state_name((enum server_state)i);
}

static const char *
recording_delivered_name(int i)
{
    return delivered_name((enum delivered)i);
}

static const char *
recording_site_name(int i)
{
    return failure_site_name((enum failure_site)i);
}

static const char *
recording_reason_name(int i)
{
    return failure_reason_name((enum failure_reason)i);
}

static const char *
recording_outcome_name(int i)
{
    return ending_outcome_name((enum ending_outcome)i);
}

static const char *
recording_liveness_name(int i)
{
    return liveness_state_name((enum liveness_state)i);
}

static enum mcp_era
recording_era(const char *name)
{
    if (name == NULL)
        return MCP_ERA_NONE;
    if (strcmp(name, "modern") == 0)
        return MCP_ERA_MODERN;
    if (strcmp(name, "legacy_sse") == 0)
        return MCP_ERA_LEGACY_SSE;
    if (strcmp(name, "legacy") == 0)
        return MCP_ERA_LEGACY;
    return MCP_ERA_NONE;
}

/* A failure's members (kind given), as an exchange line or a last_failure
 * object has them. */
static void
recording_failure(struct recording_parser *p, struct recording_event *ev,
    const cJSON *o)
{
    int d = recording_enum(recording_str(o, "delivered"), DELIVERED__COUNT,
        recording_delivered_name);
    int site = recording_enum(recording_str(o, "site"), FAILURE_SITE__COUNT,
        recording_site_name);
    int reason = recording_enum(recording_str(o, "reason"),
        FAILURE_REASON__COUNT, recording_reason_name);
    const char *detail = recording_str(o, "detail");

    ev->delivered = d >= 0 ? (enum delivered)d : DELIVERED_UNKNOWN;
    ev->site = site >= 0 ? (enum failure_site)site : FAILURE_SITE_REQUEST;
    ev->reason = reason >= 0 ? (enum failure_reason)reason :
        FAILURE_REASON_NONE;
    ev->http_status = (long)recording_num(o, "http_status", 0);
    ev->detail = detail != NULL ? recording_own(p->log, detail) : "";
}

/* A state line's facts (and a snapshot's). */
static void
recording_state_facts(struct recording_parser *p, struct recording_event *ev,
    const cJSON *o)
{
    int         st = recording_enum(recording_str(o, "state"), SERVER__COUNT,
        recording_state_name);
    const char *pv = recording_str(o, "protocol_version");

    ev->state = st >= 0 ? (enum server_state)st : SERVER_IDLE;
    ev->era = recording_era(recording_str(o, "era"));
    ev->protocol_version = pv != NULL ? recording_intern(p, pv) : NULL;
    ev->tools = (long)recording_num(o, "tools", -1);
    ev->rtt_ms = recording_num(o, "rtt_ms", -1);
}

static void
recording_ending(struct recording_event *ev, struct recording_parser *p,
    const cJSON *o)
{
    struct ending *e = xcalloc(1, sizeof(*e));
    int            out = recording_enum(recording_str(o, "outcome"),
        ENDING__COUNT, recording_outcome_name);
    int            kind = failure_kind_from_name(recording_str(o, "kind") !=
        NULL ? recording_str(o, "kind") : "");
    int            d = recording_enum(recording_str(o, "delivered"),
        DELIVERED__COUNT, recording_delivered_name);
    const char    *detail = recording_str(o, "detail");
    const cJSON   *settled = cJSON_GetObjectItemCaseSensitive(o,
        "settled_ms");

    recording_take(p->log, e);
    ev->ending = e;
    e->outcome = out >= 0 ? (enum ending_outcome)out : ENDING_PENDING;
    e->http_status = (long)recording_num(o, "http_status", 0);
    e->has_failure = kind >= 0;
    e->kind = kind >= 0 ? (enum failure_kind)kind : FAILURE_UNKNOWN;
    e->delivered = d >= 0 ? (enum delivered)d : DELIVERED_UNKNOWN;
    e->exit_code = (int)recording_num(o, "exit_code", -1);
    e->signal = (int)recording_num(o, "signal", 0);
    e->half_open = recording_bool(o, "half_open");
    e->sessionless = recording_bool(o, "sessionless");
    e->duration_ms = recording_num(o, "duration_ms", 0);
    e->settled = cJSON_IsNumber(settled);
    e->settled_ms = e->settled ? settled->valuedouble : 0;
    e->started_at = ev->at - (int64_t)e->duration_ms;
    if (detail != NULL)
        snprintf(e->detail, sizeof(e->detail), "%s", detail);
}

/* A fleet line: its servers, merged by name. */
static void
recording_fleet_line(struct recording_parser *p, const cJSON *o, int64_t at)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, "servers");
    const cJSON *it;
    const char  *v = recording_str(o, "mcptop");

    if (p->log->mcptop == NULL)
        p->log->mcptop = xstrdup(v != NULL ? v : "?");
    if (p->log->started_at == 0)
        p->log->started_at = at;
    cJSON_ArrayForEach(it, arr) {
        const char              *name = recording_str(it, "name");
        const char              *tr = recording_str(it, "transport");
        const char              *tg = recording_str(it, "target");
        const cJSON             *tags = cJSON_GetObjectItemCaseSensitive(it,
            "tags");
        const cJSON             *t;
        struct recording_server *s;
        size_t                   idx;

        if (name == NULL)
            continue;
        /* recording_server may move the array: index first. */
        idx = recording_server(p, name);
        s = &p->log->servers[idx];
        free(s->transport);
        s->transport = xstrdup(tr != NULL ? tr : "?");
        free(s->target);
        s->target = xstrdup(tg != NULL ? tg : "");
        for (size_t k = 0; k < s->ntags; k++)
            free(s->tags[k]);
        free(s->tags);
        s->tags = NULL;
        s->ntags = 0;
        cJSON_ArrayForEach(t, tags) {
            if (!cJSON_IsString(t))
                continue;
            s->tags = xrealloc(s->tags, (s->ntags + 1) * sizeof(char *));
            s->tags[s->ntags++] = xstrdup(t->valuestring);
        }
        s->disabled = recording_bool(it, "disabled");
    }
}

/* One line's event into ev; false when it has none (or is not one). */
static bool
recording_line(struct recording_parser *p, const cJSON *o,
    struct recording_event *ev)
{
    const char *type = recording_str(o, "event");
    const char *ts = recording_str(o, "ts");
    const char *name = recording_str(o, "server");

    memset(ev, 0, sizeof(*ev));
    ev->at = ts != NULL ? recording_parse_iso(ts) : -1;
    ev->mono_ms = (int64_t)recording_num(o, "mono_ms", -1);
    ev->tools = -1;
    ev->rtt_ms = -1;
    ev->server = (size_t)-1;
    if (type == NULL || ev->at < 0)
        return false;
    if (strcmp(type, "recording") == 0) {
        recording_fleet_line(p, o, ev->at);
        return false;
    }
    if (strcmp(type, "stopping") == 0) {
        ev->type = RECORDING_STOPPING;
        return true;
    }
    if (strcmp(type, "exit") == 0) {
        ev->type = RECORDING_EXIT;
        ev->sessions_ended = (long)recording_num(o, "sessions_ended", 0);
        ev->sessions_not_ended = (long)recording_num(o,
            "sessions_not_ended", 0);
        return true;
    }
    /* A snapshot names its server "name"; every other line "server". */
    if (strcmp(type, "server") == 0)
        name = recording_str(o, "name");
    if (name == NULL)
        return false;
    ev->server = recording_server(p, name);
    if (strcmp(type, "exchange") == 0) {
        const char *op = recording_str(o, "op");
        const char *outcome = recording_str(o, "outcome");
        int         kind;

        if (op == NULL || outcome == NULL)
            return false;
        ev->type = RECORDING_EXCHANGE;
        ev->op = recording_intern(p, op);
        ev->ms = recording_num(o, "ms", 0);
        ev->completed = strcmp(outcome, "completed") == 0;
        ev->detail = "";
        if (!ev->completed) {
            kind = failure_kind_from_name(outcome);
            ev->kind = kind >= 0 ? (enum failure_kind)kind : FAILURE_UNKNOWN;
            recording_failure(p, ev, o);
        }
    } else if (strcmp(type, "health") == 0 || strcmp(type, "server") == 0) {
        const char *hs = recording_str(o, strcmp(type, "health") == 0 ?
            "state" : "health");
        const char *why = recording_str(o, strcmp(type, "health") == 0 ?
            "reason" : "health_reason");
        int         h = recording_enum(hs, HEALTH__COUNT,
            recording_health_name);
        int         was = recording_enum(recording_str(o, "was"),
            HEALTH__COUNT, recording_health_name);

        if (h < 0)
            return false;
        ev->type = strcmp(type, "health") == 0 ? RECORDING_HEALTH :
            RECORDING_SERVER;
        ev->health = (enum health_state)h;
        ev->was = was >= 0 ? (enum health_state)was : HEALTH__COUNT;
        ev->health_reason = recording_intern(p, why != NULL ? why : "");
        if (ev->type == RECORDING_SERVER) {
            const cJSON *lf = cJSON_GetObjectItemCaseSensitive(o,
                "last_failure");

            recording_state_facts(p, ev, o);
            ev->detail = "";
            if (cJSON_IsObject(lf)) {
                int         kind = failure_kind_from_name(
                    recording_str(lf, "kind") != NULL ?
                    recording_str(lf, "kind") : "");
                const char *op = recording_str(lf, "op");

                ev->kind = kind >= 0 ? (enum failure_kind)kind :
                    FAILURE_UNKNOWN;
                ev->op = recording_intern(p, op != NULL ? op : "");
                recording_failure(p, ev, lf);
            }
        }
    } else if (strcmp(type, "state") == 0) {
        ev->type = RECORDING_STATE;
        recording_state_facts(p, ev, o);
    } else if (strcmp(type, "liveness") == 0) {
        int l = recording_enum(recording_str(o, "state"), LIVENESS__COUNT,
            recording_liveness_name);

        if (l < 0)
            return false;
        ev->type = RECORDING_LIVENESS;
        ev->liveness = (enum liveness_state)l;
    } else if (strcmp(type, "tools_changed") == 0) {
        ev->type = RECORDING_TOOLS;
        ev->tools = (long)recording_num(o, "tools", -1);
    } else if (strcmp(type, "ending") == 0 || strcmp(type, "settled") == 0) {
        ev->type = strcmp(type, "ending") == 0 ? RECORDING_ENDING :
            RECORDING_SETTLED;
        recording_ending(ev, p, o);
    } else {
        return false;
    }
    return true;
}

int
recording_parse(const char *text, size_t len, struct recording_log **out,
    char **cause)
{
    struct recording_parser p = { 0 };
    struct recording_log   *log;
    const char             *at = text, *end = text + len;

    log = xcalloc(1, sizeof(*log) + sizeof(struct recording_owned));
    p.log = log;
    while (at < end) {
        const char *nl = memchr(at, '\n', (size_t)(end - at));
        const char *stop = nl != NULL ? nl : end;
        cJSON      *o;

        if (stop == at) {
            at = stop + 1;
            continue;
        }
        o = cJSON_ParseWithLength(at, (size_t)(stop - at));
        if (o == NULL || !cJSON_IsObject(o)) {
            if (nl != NULL)     /* the last line cut short is not counted */
                log->skipped++;
        } else {
            struct recording_event ev;

            if (recording_line(&p, o, &ev)) {
                if (log->nevents == p.cap_events) {
                    p.cap_events = p.cap_events != 0 ? p.cap_events * 2 :
                        1024;
                    log->events = xrealloc(log->events,
                        p.cap_events * sizeof(*log->events));
                }
                log->events[log->nevents++] = ev;
            }
        }
        cJSON_Delete(o);
        at = stop + 1;
    }
    /* Every line is written with its newline: without one, the file was
     * cut (a crash mid-write), even when what is there parses. */
    log->cut = len > 0 && text[len - 1] != '\n';
    free(p.hash);
    free(p.interned);
    if (log->mcptop == NULL) {
        *cause = xstrdup("not a recording of mcptop (no fleet line; "
            "record one with --record FILE)");
        recording_log_free(log);
        return -1;
    }
    *out = log;
    return 0;
}

int
recording_read(const char *path, struct recording_log **out, char **cause)
{
    const char *why;
    FILE       *fp = file_fopen_regular(path, &why);  /* never a wait */
    char       *text = NULL;
    size_t      len = 0, cap = 0, n;
    int         rc;

    if (fp == NULL) {
        *cause = str_printf("cannot read %s: %s", path, why);
        return -1;
    }
    do {
        if (cap - len < 65536) {
            cap = cap != 0 ? cap * 2 : 1 << 20;
            text = xrealloc(text, cap);
        }
        n = fread(text + len, 1, cap - len, fp);
        len += n;
    } while (n > 0 && (long long)len < RECORDING_READ_MAX);
    if (ferror(fp)) {
        *cause = str_printf("cannot read %s: %s", path, strerror(errno));
        fclose(fp);
        free(text);
        return -1;
    }
    fclose(fp);
    rc = recording_parse(text != NULL ? text : "", len, out, cause);
    if (rc != 0) {
        char *c = str_printf("%s: %s", path, *cause);

        free(*cause);
        *cause = c;
    }
    free(text);
    return rc;
}

void
recording_log_free(struct recording_log *log)
{
    struct recording_owned *o;

    if (log == NULL)
        return;
    o = recording_owned(log);
    for (size_t i = 0; i < o->n; i++)
        free(o->v[i]);
    free(o->v);
    for (size_t i = 0; i < log->nservers; i++) {
        struct recording_server *s = &log->servers[i];

        free(s->name);
        free(s->transport);
        free(s->target);
        for (size_t k = 0; k < s->ntags; k++)
            free(s->tags[k]);
        free(s->tags);
    }
    free(log->servers);
    free(log->events);
    free(log->mcptop);
    free(log);
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's
 * days_from_civil), so no time zone is consulted. */
static int64_t
recording_days(int64_t y, unsigned m, unsigned d)
{
    int64_t  era;
    unsigned yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = (unsigned)(y - era * 400);
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

int64_t
recording_parse_iso(const char *s)
{
    int         y, mo, d, h, mi, sec, n = 0, oh = 0, om = 0;
    int64_t     ms = 0, t;
    const char *p;

    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec,
        &n) != 6 || n != 19 || mo < 1 || mo > 12 || d < 1 || d > 31 ||
        h > 23 || mi > 59 || sec > 60 || y < 1970)
        return -1;
    p = s + n;
    if (*p == '.') {
        int digits = 0;

        for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
            if (digits < 3)
                ms = ms * 10 + (*p - '0');
        }
        if (digits == 0)
            return -1;
        for (; digits < 3; digits++)
            ms *= 10;
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        if (sscanf(p + 1, "%2d:%2d", &oh, &om) != 2 || strlen(p) != 6)
            return -1;
        if (*p == '-') {
            oh = -oh;
            om = -om;
        }
        p += 6;
    } else {
        return -1;
    }
    if (*p != '\0')
        return -1;
    t = recording_days(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 +
        mi * 60 + sec - oh * 3600 - om * 60;
    return t * 1000 + ms;
}

int64_t
recording_parse_time(const char *s, int64_t day_ms)
{
    int   h, m, sec = 0, n = 0;
    char *end = NULL;

    if (s == NULL || s[0] == '\0')
        return -1;
    if (s[0] == '+') {
        double v = strtod(s + 1, &end);
        double unit = 1000;

        if (end == s + 1 || !(v >= 0))
            return -1;
        if (*end == 'm')
            unit = 60000;
        else if (*end == 'h')
            unit = 3600000;
        else if (*end != 's' && *end != '\0')
            return -1;
        if (*end != '\0' && end[1] != '\0')
            return -1;
        return day_ms + (int64_t)(v * unit);
    }
    if (strchr(s, 'T') != NULL)
        return recording_parse_iso(s);
    if ((sscanf(s, "%2d:%2d:%2d%n", &h, &m, &sec, &n) == 3 ||
        sscanf(s, "%2d:%2d%n", &h, &m, &n) == 2) && s[n] == '\0' &&
        h >= 0 && h <= 23 && m >= 0 && m <= 59 && sec >= 0 && sec <= 59) {
        int64_t day = day_ms - day_ms % 86400000;

        return day + (int64_t)h * 3600000 + (int64_t)m * 60000 +
            (int64_t)sec * 1000;
    }
    return -1;
}
