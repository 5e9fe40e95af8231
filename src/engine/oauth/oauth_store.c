/*
 * The token file. In memory the entries are an array sorted by (server,
 * resource), so that 10,000 servers find theirs in O(n log n) in all. The
 * file's identity (device, inode, size, mtime) says when to read it again.
 * Writing goes to "tokens.json.<pid>.tmp" created 0600 with O_EXCL, then
 * fsync and rename over tokens.json.
 *
 * Every read-modify-write (put, forget) holds an exclusive flock(2) on
 * "tokens.json.lock" beside it, from the read to the rename, so that
 * processes writing at once (eight logins, two monitors refreshing) merge
 * their entries instead of the last writer's copy winning. The lock is
 * waited for at most OAUTH_STORE_LOCK_MS, a few milliseconds at a time,
 * so a process that hangs holding it costs a bounded wait and a clear
 * error, never a stuck loop.
 */
#include "engine/oauth_store.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/str.h"
#include "util/xmalloc.h"

#define OAUTH_STORE_MAX_BYTES (64u * 1024 * 1024)
#define OAUTH_STORE_LOCK_MS   2000  /* the longest wait for the lock */
#define OAUTH_STORE_LOCK_STEP_MS 5

struct oauth_store_entry {
    char               *server;
    struct oauth_token  tok;
};

struct oauth_store {
    char                     *path;
    struct oauth_store_entry *e;
    size_t                    n;
    bool                      seen;         /* read once */
    dev_t                     dev;
    ino_t                     ino;
    off_t                     size;
    struct timespec           mtime;
};

void
oauth_token_done(struct oauth_token *t)
{
    free(t->resource);
    free(t->resource_indicator);
    str_wipe_free(t->access_token);
    free(t->token_type);
    str_wipe_free(t->refresh_token);
    free(t->scope);
    free(t->step_up_scope);
    free(t->issuer);
    free(t->token_endpoint);
    free(t->client_id);
    str_wipe_free(t->client_secret);
    free(t->auth_method);
    memset(t, 0, sizeof(*t));
}

void
oauth_token_copy(struct oauth_token *dst, const struct oauth_token *src)
{
    dst->resource = str_dup(src->resource);
    dst->resource_indicator = str_dup(src->resource_indicator);
    dst->access_token = str_dup(src->access_token);
    dst->token_type = str_dup(src->token_type);
    dst->expires_at = src->expires_at;
    dst->obtained_at = src->obtained_at;
    dst->refresh_token = str_dup(src->refresh_token);
    dst->scope = str_dup(src->scope);
    dst->step_up_scope = str_dup(src->step_up_scope);
    dst->issuer = str_dup(src->issuer);
    dst->token_endpoint = str_dup(src->token_endpoint);
    dst->client_id = str_dup(src->client_id);
    dst->client_secret = str_dup(src->client_secret);
    dst->auth_method = str_dup(src->auth_method);
}

static void
oauth_store_clear(struct oauth_store *st)
{
    for (size_t i = 0; i < st->n; i++) {
        free(st->e[i].server);
        oauth_token_done(&st->e[i].tok);
    }
    free(st->e);
    st->e = NULL;
    st->n = 0;
}

struct oauth_store *
oauth_store_open(const char *path, char **cause)
{
    struct oauth_store *st;
    const char         *state = getenv("XDG_STATE_HOME");
    const char         *home = getenv("HOME");

    st = xcalloc(1, sizeof(*st));
    if (path != NULL)
        st->path = xstrdup(path);
    else if (state != NULL && state[0] == '/')
        st->path = str_printf("%s/mcptop/tokens.json", state);
    else if (home != NULL && home[0] != '\0')
        st->path = str_printf("%s/.local/state/mcptop/tokens.json", home);
    if (st->path == NULL) {
        *cause = xstrdup("no place for the token file: neither "
            "XDG_STATE_HOME nor HOME is set");
        free(st);
        return NULL;
    }
    return st;
}

void
oauth_store_free(struct oauth_store *st)
{
    if (st == NULL)
        return;
    oauth_store_clear(st);
    free(st->path);
    free(st);
}

const char *
oauth_store_path(const struct oauth_store *st)
{
    return st->path;
}

size_t
oauth_store_count(const struct oauth_store *st)
{
    return st->n;
}

static int
oauth_store_cmp(const char *s1, const char *r1, const char *s2,
    const char *r2)
{
    int c = strcmp(s1, s2);

    return c != 0 ? c : strcmp(r1 != NULL ? r1 : "", r2 != NULL ? r2 : "");
}

static int
oauth_store_entry_cmp(const void *a, const void *b)
{
    const struct oauth_store_entry *x = a, *y = b;

    return oauth_store_cmp(x->server, x->tok.resource, y->server,
        y->tok.resource);
}

/* Index of (server, resource), or -1; *at gets the insertion point. */
static long
oauth_store_index(const struct oauth_store *st, const char *server,
    const char *resource, size_t *at)
{
    size_t lo = 0, hi = st->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int    c = oauth_store_cmp(st->e[mid].server, st->e[mid].tok.resource,
            server, resource);

        if (c == 0) {
            if (at != NULL)
                *at = mid;
            return (long)mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (at != NULL)
        *at = lo;
    return -1;
}

const struct oauth_token *
oauth_store_find(const struct oauth_store *st, const char *server,
    const char *resource)
{
    long i = oauth_store_index(st, server, resource, NULL);

    return i >= 0 ? &st->e[i].tok : NULL;
}

static char *
oauth_store_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsString(v) ? xstrdup(v->valuestring) : NULL;
}

static int64_t
oauth_store_int(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

/* Replace the entries with those of text. 0, or -1 with *cause. */
static int
oauth_store_parse(struct oauth_store *st, const char *text, size_t len,
    char **cause)
{
    cJSON       *root = cJSON_ParseWithLength(text, len);
    const cJSON *arr, *o;
    size_t       n = 0;

    arr = cJSON_GetObjectItemCaseSensitive(root, "tokens");
    if (root == NULL || !cJSON_IsObject(root) || !cJSON_IsArray(arr)) {
        *cause = str_printf("%s: not an mcptop token file", st->path);
        cJSON_Delete(root);
        return -1;
    }
    oauth_store_clear(st);
    st->e = xcalloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*st->e));
    cJSON_ArrayForEach(o, arr) {
        struct oauth_store_entry *e = &st->e[n];

        e->server = oauth_store_str(o, "server");
        e->tok.resource = oauth_store_str(o, "resource");
        e->tok.access_token = oauth_store_str(o, "access_token");
        if (e->server == NULL || e->tok.resource == NULL ||
            e->tok.access_token == NULL) {
            free(e->server);
            oauth_token_done(&e->tok);
            continue;               /* an entry that cannot be used */
        }
        e->tok.resource_indicator = oauth_store_str(o,
            "resource_indicator");
        e->tok.token_type = oauth_store_str(o, "token_type");
        e->tok.expires_at = oauth_store_int(o, "expires_at");
        e->tok.obtained_at = oauth_store_int(o, "obtained_at");
        e->tok.refresh_token = oauth_store_str(o, "refresh_token");
        e->tok.scope = oauth_store_str(o, "scope");
        e->tok.step_up_scope = oauth_store_str(o, "step_up_scope");
        e->tok.issuer = oauth_store_str(o, "issuer");
        e->tok.token_endpoint = oauth_store_str(o, "token_endpoint");
        e->tok.client_id = oauth_store_str(o, "client_id");
        e->tok.client_secret = oauth_store_str(o, "client_secret");
        e->tok.auth_method = oauth_store_str(o, "auth_method");
        n++;
    }
    st->n = n;
    qsort(st->e, st->n, sizeof(*st->e), oauth_store_entry_cmp);
    /* Parsed text held secrets: wipe cJSON's copies before freeing. */
    cJSON_ArrayForEach(o, arr) {
        const cJSON *v;

        cJSON_ArrayForEach(v, o) {
            if (cJSON_IsString(v))
                explicit_bzero(v->valuestring, strlen(v->valuestring));
        }
    }
    cJSON_Delete(root);
    return 0;
}

int
oauth_store_reload(struct oauth_store *st, char **cause)
{
    struct stat sb;
    int         fd;
    char       *text;
    ssize_t     got;
    size_t      len = 0;
    int         rc;

    fd = open(st->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0 && errno == ELOOP) {
        *cause = str_printf("%s: a symbolic link, not the token file "
            "(refused: a cache of credentials is a file of its own)",
            st->path);
        return -1;
    }
    if (fd < 0 && errno == ENOENT) {
        oauth_store_clear(st);
        st->seen = true;
        st->ino = 0;
        return 0;
    }
    if (fd < 0 || fstat(fd, &sb) != 0) {
        *cause = str_printf("%s: %s", st->path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (st->seen && sb.st_dev == st->dev && sb.st_ino == st->ino &&
        sb.st_size == st->size && sb.st_mtim.tv_sec == st->mtime.tv_sec &&
        sb.st_mtim.tv_nsec == st->mtime.tv_nsec) {
        close(fd);
        return 0;
    }
    if (!S_ISREG(sb.st_mode) || (size_t)sb.st_size > OAUTH_STORE_MAX_BYTES) {
        *cause = str_printf("%s: not a regular file of at most 64 MiB",
            st->path);
        close(fd);
        return -1;
    }
    text = xmalloc((size_t)sb.st_size + 1);
    while (len < (size_t)sb.st_size) {
        got = read(fd, text + len, (size_t)sb.st_size - len);
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    rc = oauth_store_parse(st, text, len, cause);
    explicit_bzero(text, len);
    free(text);
    if (rc == 0) {
        st->seen = true;
        st->dev = sb.st_dev;
        st->ino = sb.st_ino;
        st->size = sb.st_size;
        st->mtime = sb.st_mtim;
    }
    return rc;
}

static void
oauth_store_add_str(cJSON *o, const char *key, const char *v)
{
    if (v != NULL)
        cJSON_AddStringToObject(o, key, v);
}

/* mkdir -p the file's directory, 0700. 0 or -1 with *cause. */
static int
oauth_store_mkdirs(const char *path, char **cause)
{
    char *dir = xstrdup(path), *slash = strrchr(dir, '/');

    if (slash == NULL || slash == dir) {
        free(dir);
        return 0;
    }
    *slash = '\0';
    for (char *p = dir + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;

            *p = '\0';
            if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
                *cause = str_printf("cannot create %s: %s", dir,
                    strerror(errno));
                free(dir);
                return -1;
            }
            *p = c;
            if (c == '\0')
                break;
        }
    }
    free(dir);
    return 0;
}

/* Write the entries: temporary file, fsync, rename. 0 or -1. */
static int
oauth_store_write(struct oauth_store *st, char **cause)
{
    cJSON  *root = cJSON_CreateObject(), *arr, *o;
    char   *text, *tmp = NULL;
    size_t  len, off = 0;
    int     fd, rc = -1;

    cJSON_AddNumberToObject(root, "version", 1);
    arr = cJSON_AddArrayToObject(root, "tokens");
    for (size_t i = 0; i < st->n; i++) {
        const struct oauth_token *t = &st->e[i].tok;

        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "server", st->e[i].server);
        oauth_store_add_str(o, "resource", t->resource);
        oauth_store_add_str(o, "resource_indicator", t->resource_indicator);
        oauth_store_add_str(o, "access_token", t->access_token);
        oauth_store_add_str(o, "token_type", t->token_type);
        cJSON_AddNumberToObject(o, "expires_at", (double)t->expires_at);
        cJSON_AddNumberToObject(o, "obtained_at", (double)t->obtained_at);
        oauth_store_add_str(o, "refresh_token", t->refresh_token);
        oauth_store_add_str(o, "scope", t->scope);
        oauth_store_add_str(o, "step_up_scope", t->step_up_scope);
        oauth_store_add_str(o, "issuer", t->issuer);
        oauth_store_add_str(o, "token_endpoint", t->token_endpoint);
        oauth_store_add_str(o, "client_id", t->client_id);
        oauth_store_add_str(o, "client_secret", t->client_secret);
        oauth_store_add_str(o, "auth_method", t->auth_method);
        cJSON_AddItemToArray(arr, o);
    }
    text = cJSON_Print(root);
    cJSON_Delete(root);
    if (text == NULL) {
        *cause = xstrdup("cannot serialise the token file");
        return -1;
    }
    len = strlen(text);
    if (oauth_store_mkdirs(st->path, cause) != 0)
        goto out_text;
    tmp = str_printf("%s.%ld.tmp", st->path, (long)getpid());
    unlink(tmp);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        *cause = str_printf("cannot write %s: %s", tmp, strerror(errno));
        goto out_tmp;
    }
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);

        if (w <= 0)
            break;
        off += (size_t)w;
    }
    if (off < len || fsync(fd) != 0) {
        *cause = str_printf("cannot write %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        goto out_tmp;
    }
    close(fd);
    if (rename(tmp, st->path) != 0) {
        *cause = str_printf("cannot replace %s: %s", st->path,
            strerror(errno));
        unlink(tmp);
        goto out_tmp;
    }
    rc = 0;
    st->seen = false;               /* our own write: read it back lazily */
out_tmp:
    free(tmp);
out_text:
    explicit_bzero(text, len);
    cJSON_free(text);
    return rc;
}

/*
 * Take the lock file's exclusive lock (creating the directory and the
 * file, 0600). The descriptor (give it to oauth_store_unlock), or -1 with
 * *cause when it cannot be made or stays held past OAUTH_STORE_LOCK_MS.
 */
static int
oauth_store_lock(const struct oauth_store *st, char **cause)
{
    char           *path;
    int             fd;
    long            waited = 0;
    struct timespec step = { 0, OAUTH_STORE_LOCK_STEP_MS * 1000000L };

    if (oauth_store_mkdirs(st->path, cause) != 0)
        return -1;
    path = str_printf("%s.lock", st->path);
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        *cause = str_printf("cannot open the lock %s: %s", path,
            strerror(errno));
        free(path);
        return -1;
    }
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if ((errno != EWOULDBLOCK && errno != EINTR) ||
            waited >= OAUTH_STORE_LOCK_MS) {
            *cause = errno == EWOULDBLOCK ? str_printf("%s is held by "
                "another process for over %d ms", path, OAUTH_STORE_LOCK_MS)
                : str_printf("cannot lock %s: %s", path, strerror(errno));
            close(fd);
            free(path);
            return -1;
        }
        nanosleep(&step, NULL);
        waited += OAUTH_STORE_LOCK_STEP_MS;
    }
    free(path);
    return fd;
}

/* Release what oauth_store_lock took. */
static void
oauth_store_unlock(int fd)
{
    flock(fd, LOCK_UN);
    close(fd);
}

int
oauth_store_reload_locked(struct oauth_store *st, char **cause)
{
    int fd = oauth_store_lock(st, cause), rc;

    if (fd < 0)
        return -1;
    rc = oauth_store_reload(st, cause);
    oauth_store_unlock(fd);
    return rc;
}

int
oauth_store_put(struct oauth_store *st, const char *server,
    const struct oauth_token *tok, char **cause)
{
    size_t at;
    long   i;
    int    lock, rc;

    if ((lock = oauth_store_lock(st, cause)) < 0)
        return -1;
    if (oauth_store_reload(st, cause) != 0) {
        oauth_store_unlock(lock);
        return -1;
    }
    i = oauth_store_index(st, server, tok->resource, &at);
    if (i >= 0) {
        oauth_token_done(&st->e[i].tok);
        oauth_token_copy(&st->e[i].tok, tok);
    } else {
        st->e = xrealloc(st->e, (st->n + 1) * sizeof(*st->e));
        memmove(&st->e[at + 1], &st->e[at], (st->n - at) * sizeof(*st->e));
        memset(&st->e[at], 0, sizeof(st->e[at]));
        st->e[at].server = xstrdup(server);
        oauth_token_copy(&st->e[at].tok, tok);
        st->n++;
    }
    rc = oauth_store_write(st, cause);
    oauth_store_unlock(lock);
    return rc;
}

long
oauth_store_forget(struct oauth_store *st, const char *server, char **cause)
{
    size_t k = 0;
    long   removed = 0;
    int    lock;

    if ((lock = oauth_store_lock(st, cause)) < 0)
        return -1;
    if (oauth_store_reload(st, cause) != 0) {
        oauth_store_unlock(lock);
        return -1;
    }
    for (size_t i = 0; i < st->n; i++) {
        if (strcmp(st->e[i].server, server) == 0) {
            free(st->e[i].server);
            oauth_token_done(&st->e[i].tok);
            removed++;
            continue;
        }
        st->e[k++] = st->e[i];
    }
    st->n = k;
    if (removed > 0 && oauth_store_write(st, cause) != 0)
        removed = -1;
    oauth_store_unlock(lock);
    return removed;
}
