/*
 * curses, in one place: start and end it, turn theme roles into
 * attributes (colour pairs only when the terminal has colours and NO_COLOR
 * is unset), draw ui_lines clipped to the width, read keys and clicks.
 * Nothing else in mcptop writes to the terminal while curses is up.
 *
 * Input never blocks. curses does not read the terminal: the loop reads it
 * (screen_pump, when libev says it is readable) and hands complete key
 * sequences to curses through a pipe of ours whose read end is
 * non-blocking. curses' wgetch, even in nodelay mode, calls a blocking
 * read(2) whenever its mouse code wants the rest of a gesture (a release
 * alone, a button outside the mask, a report it cannot decode, a report
 * split across writes); on the terminal that read waits for the next key,
 * with the whole loop. On the pipe it returns at once. An escape sequence
 * cut short by a read is held back until its end arrives, or for at most
 * SCREEN_HOLD_MS (then it is a lone Esc and the bytes after it).
 *
 * The stale marker: a SIGALRM handler, armed by every loop turn
 * (screen_tick), writes "STALE Ns" into the top right corner, straight to
 * the terminal, when the loop has not turned for 2 s; the next turn
 * repaints the whole screen and says how long it was stuck.
 */
#include "ui/screen.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <time.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define SCREEN_STALE_S  2
#define SCREEN_INBUF    8192
/* Every mouse event curses can report: a mask that leaves one out makes
 * curses read on for the rest of a gesture (see above). */
#define SCREEN_MOUSE    ALL_MOUSE_EVENTS

static bool   screen_up;
static attr_t screen_attr[UI_ROLE__COUNT];
static attr_t screen_sel[UI_ROLE__COUNT];
static SCREEN *screen_sp;
static FILE  *screen_in;            /* curses' input: our pipe's read end */
static int    screen_pipe_w = -1;   /* the pipe's write end */
static char   screen_buf[SCREEN_INBUF]; /* read from the terminal, not yet
                                           in the pipe */
static size_t screen_nbuf;
static size_t screen_nready;        /* of which complete: may go now */
static bool   screen_mouse_on;
static bool   screen_utf8;

/* Shared with the SIGALRM handler. */
static volatile sig_atomic_t screen_sig_up;
static volatile sig_atomic_t screen_sig_drawing;
static volatile sig_atomic_t screen_sig_cols = 80;
static volatile sig_atomic_t screen_sig_tick;       /* monotonic s */
static volatile sig_atomic_t screen_sig_stalled;    /* s, when drawn */
static bool                  screen_dog;

int
screen_init(bool utf8, bool mouse)
{
    const char *cup;
    int         p[2];

    if (screen_up)
        return 0;
    if (pipe(p) != 0)
        return -1;
    if (fcntl(p[0], F_SETFL, O_NONBLOCK) != 0 ||
        fcntl(p[1], F_SETFL, O_NONBLOCK) != 0 ||
        fcntl(p[0], F_SETFD, FD_CLOEXEC) != 0 ||
        fcntl(p[1], F_SETFD, FD_CLOEXEC) != 0 ||
        (screen_in = fdopen(p[0], "r")) == NULL) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    screen_pipe_w = p[1];
    screen_utf8 = utf8;
    /* Output and the terminal's modes go to stdout (the terminal); keys
     * come from the pipe. */
    screen_sp = newterm(NULL, stdout, screen_in);
    if (screen_sp == NULL)
        goto fail;
    /* A terminal that cannot move the cursor (TERM=dumb) cannot show a
     * table: give it back untouched. */
    cup = tigetstr("cup");
    if (cup == NULL || cup == (const char *)-1) {
        endwin();
        delscreen(screen_sp);
        goto fail;
    }
    screen_up = true;
    screen_sig_up = 1;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    /* Sequences reach curses whole (screen_pump holds a cut one back), so
     * curses never waits for the rest of one. */
    set_escdelay(0);
    /* Never cut a frame short because keys are waiting. */
    typeahead(-1);
    curs_set(0);
    /* Select on the press: no click resolution, so no wait for a release
     * (with the pipe it could not block anyway). */
    mouseinterval(0);
    screen_mouse(mouse);
    return 0;
fail:
    screen_sp = NULL;
    fclose(screen_in);
    screen_in = NULL;
    close(screen_pipe_w);
    screen_pipe_w = -1;
    return -1;
}

void
screen_fini(void)
{
    if (!screen_up)
        return;
    screen_up = false;
    screen_sig_up = 0;
    if (screen_dog) {
        alarm(0);
        signal(SIGALRM, SIG_DFL);
        screen_dog = false;
    }
    mousemask(0, NULL);
    curs_set(1);
    endwin();
    fflush(stdout);
    delscreen(screen_sp);
    screen_sp = NULL;
    fclose(screen_in);
    screen_in = NULL;
    close(screen_pipe_w);
    screen_pipe_w = -1;
    screen_nbuf = screen_nready = 0;
}

void
screen_clipboard(const char *text, size_t len)
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t            n = len < SCREEN_CLIPBOARD_MAX ? len :
        SCREEN_CLIPBOARD_MAX;
    size_t            cap = 16 + (n + 2) / 3 * 4, k = 0, off = 0;
    char             *out = malloc(cap);

    if (out == NULL)
        return;
    k = (size_t)snprintf(out, cap, "\033]52;c;");
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)text[i] << 16;

        if (i + 1 < n)
            v |= (unsigned char)text[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)text[i + 2];
        out[k++] = b64[v >> 18 & 63];
        out[k++] = b64[v >> 12 & 63];
        out[k++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
        out[k++] = i + 2 < n ? b64[v & 63] : '=';
    }
    out[k++] = '\a';
    /* After curses' own output: the sequence goes between two frames. */
    fflush(stdout);
    while (off < k) {
        ssize_t w = write(STDOUT_FILENO, out + off, k - off);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    free(out);
}

void
screen_mouse(bool on)
{
    screen_mouse_on = on;
    if (screen_up)
        mousemask(on ? SCREEN_MOUSE : 0, NULL);
}

bool
screen_mouse_enabled(void)
{
    return screen_mouse_on;
}

const char *
screen_curses_version(void)
{
    return curses_version();
}

bool
screen_colour_ok(void)
{
    const char *nc = getenv("NO_COLOR");

    if (nc != NULL && nc[0] != '\0')
        return false;
    return screen_up && has_colors();
}

/* A 256-colour index in the 16 classic ones. */
static short
screen_to16(short c)
{
    int idx, r, g, b, base, mx;

    if (c < 16)
        return c;
    if (c >= 232) {
        if (c < 238)
            return 0;
        if (c < 244)
            return 8;
        return c < 250 ? 7 : 15;
    }
    idx = c - 16;
    r = idx / 36;
    g = (idx / 6) % 6;
    b = idx % 6;
    base = (r >= 2 ? 1 : 0) | (g >= 2 ? 2 : 0) | (b >= 2 ? 4 : 0);
    mx = r > g ? r : g;
    mx = mx > b ? mx : b;
    return (short)(base + (mx >= 4 ? 8 : 0));
}

/* The colour to give curses on this terminal; *bold when a bright colour
 * had to become bold on an 8-colour terminal. */
static short
screen_colour(short c, bool *bold)
{
    if (c < 0)
        return -1;
    if (COLORS >= 256)
        return c;
    c = screen_to16(c);
    if (COLORS >= 16)
        return c;
    if (c >= 8) {
        c = (short)(c - 8);
        if (bold != NULL)
            *bold = true;
    }
    return c;
}

static attr_t
screen_attrs(unsigned a)
{
    attr_t r = A_NORMAL;

    if (a & THEME_BOLD)
        r |= A_BOLD;
    if (a & THEME_DIM)
        r |= A_DIM;
    if (a & THEME_UNDERLINE)
        r |= A_UNDERLINE;
    if (a & THEME_REVERSE)
        r |= A_REVERSE;
    if (a & THEME_STANDOUT)
        r |= A_STANDOUT;
    if (a & THEME_ITALIC)
        r |= A_ITALIC;
    if (a & THEME_BLINK)
        r |= A_BLINK;
    return r;
}

void
screen_theme(const struct theme *t, bool colour)
{
    const struct theme_style *sel = &t->style[UI_ROLE_SELECTION];
    bool                      defaults = false;

    if (colour) {
        start_color();
        defaults = use_default_colors() == OK;
    }
    for (int r = 0; r < UI_ROLE__COUNT; r++) {
        const struct theme_style *st = &t->style[r];
        bool                      bold = false;
        short                     fg, bg, sfg, sbg;

        screen_attr[r] = screen_attrs(st->attrs);
        screen_sel[r] = screen_attrs(st->attrs | sel->attrs);
        if (!colour) {
            /* Attributes only: the selection must still show. */
            screen_sel[r] |= A_REVERSE;
            continue;
        }
        fg = screen_colour(st->fg, &bold);
        bg = screen_colour(st->bg, NULL);
        if (!defaults) {
            fg = fg < 0 ? COLOR_WHITE : fg;
            bg = bg < 0 ? COLOR_BLACK : bg;
        }
        if (r + 1 < COLOR_PAIRS && init_pair((short)(r + 1), fg, bg) == OK)
            screen_attr[r] |= COLOR_PAIR(r + 1);
        if (bold)
            screen_attr[r] |= A_BOLD;
        /* Selected: the role's foreground on the selection's background. */
        sfg = st->fg == THEME_DEFAULT || r == UI_ROLE_NORMAL ?
            screen_colour(sel->fg, &bold) : fg;
        sbg = screen_colour(sel->bg, NULL);
        if (!defaults) {
            sfg = sfg < 0 ? COLOR_WHITE : sfg;
            sbg = sbg < 0 ? COLOR_BLACK : sbg;
        }
        if (sfg == sbg && sbg >= 0)
            sfg = screen_colour(sel->fg, NULL);
        if (UI_ROLE__COUNT + r + 1 < COLOR_PAIRS &&
            init_pair((short)(UI_ROLE__COUNT + r + 1), sfg, sbg) == OK)
            screen_sel[r] |= COLOR_PAIR(UI_ROLE__COUNT + r + 1);
        else
            screen_sel[r] |= A_REVERSE;
        if (bold)
            screen_sel[r] |= A_BOLD;
    }
    /* Cleared cells take the normal role's colours (a theme with its own
     * background paints the whole screen). */
    bkgdset(' ' | (screen_attr[UI_ROLE_NORMAL] & A_COLOR));
}

void
screen_resize(void)
{
    struct winsize ws;

    if (!screen_up)
        return;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 &&
        ws.ws_col > 0)
        resizeterm(ws.ws_row, ws.ws_col);
    else
        resizeterm(LINES, COLS);
}

void
screen_size(int *rows, int *cols)
{
    *rows = LINES;
    *cols = COLS;
    screen_sig_cols = COLS;
}

void
screen_begin(void)
{
    erase();
}

void
screen_line(int y, const struct ui_line *l, int cols, bool selected)
{
    const attr_t *attr = selected ? screen_sel : screen_attr;
    int           x = 0, room;
    bool          cut;

    if (y < 0 || y >= LINES)
        return;
    if (cols > COLS)
        cols = COLS;
    /* A line wider than the screen ends with an ellipsis. */
    cut = l->cols > cols;
    room = cut ? cols - 1 : cols;
    for (size_t i = 0; i < l->nspan && x < room; i++) {
        const struct ui_span *sp = &l->span[i];
        int                   used;
        size_t                n;

        n = ui_text_fit(l->text + sp->off, sp->len, room - x, &used);
        if (n == 0)
            continue;
        attrset(attr[sp->role]);
        mvaddnstr(y, x, l->text + sp->off, (int)n);
        x += used;
    }
    if (cut && x < cols) {
        attrset(attr[l->base]);
        for (; x < room; x++)
            mvaddch(y, x, ' ');
        attrset(attr[UI_ROLE_DIM]);
        mvaddstr(y, x, screen_utf8 ? "\xe2\x80\xa6" : "~");
        x++;
    }
    attrset(attr[l->base]);
    for (; x < cols; x++)
        mvaddch(y, x, ' ');
    attrset(A_NORMAL);
}

void
screen_end(void)
{
    screen_sig_drawing = 1;
    refresh();
    screen_sig_drawing = 0;
}

int
screen_key(struct screen_click *click)
{
    int    ch = getch();
    MEVENT me;

    click->y = -1;
    click->x = -1;
    click->wheel = 0;
    if (ch == ERR)
        return -1;
    if (ch == KEY_MOUSE && getmouse(&me) == OK) {
        if (me.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED |
            BUTTON1_DOUBLE_CLICKED | BUTTON1_TRIPLE_CLICKED)) {
            click->y = me.y;
            click->x = me.x;
        }
        else if (me.bstate & BUTTON4_PRESSED)
            click->wheel = -1;
#ifdef BUTTON5_PRESSED
        else if (me.bstate & BUTTON5_PRESSED)
            click->wheel = 1;
#endif
    }
    return ch;
}

/* The next refresh repaints everything (a full frame). */
void
screen_invalidate(void)
{
    clearok(curscr, TRUE);
}

/*
 * How many of the n bytes at b may go to curses now: all of them, unless
 * they end inside an escape sequence (ESC; ESC [ and parameters without
 * the final byte; an X10 mouse report, ESC [ M and three bytes; ESC O and
 * its byte), which is held back. Only the last ESC is looked at: anything
 * before it is complete.
 */
static size_t
screen_complete(const char *b, size_t n)
{
    size_t p, r;

    for (p = n; p > 0; p--) {
        if (b[p - 1] == 0x1b)
            break;
    }
    if (p == 0)
        return n;
    p--;                        /* b[p] is the last ESC */
    r = n - p - 1;              /* bytes after it */
    if (n - p > 64)
        return n;               /* too long for a sequence: let it go */
    if (r == 0)
        return p;
    if (b[p + 1] == 'O')
        return r >= 2 ? n : p;
    if (b[p + 1] != '[')
        return n;               /* Alt-key: ESC and one byte */
    if (r >= 2 && b[p + 2] == 'M')
        return r >= 5 ? n : p;  /* X10 mouse: ESC [ M b x y */
    for (size_t i = p + 2; i < n; i++) {
        unsigned char c = (unsigned char)b[i];

        if (c >= 0x40 && c <= 0x7e)
            return n;           /* the final byte */
        if (c < 0x20 || c > 0x3f)
            return n;           /* not a CSI: nothing to wait for */
    }
    return p;
}

/* Move the complete bytes to the pipe, as many as it takes. */
static void
screen_flush(void)
{
    ssize_t w;

    while (screen_nready > 0) {
        w = write(screen_pipe_w, screen_buf, screen_nready);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;             /* full: curses has to read first */
        memmove(screen_buf, screen_buf + w, screen_nbuf - (size_t)w);
        screen_nbuf -= (size_t)w;
        screen_nready -= (size_t)w;
    }
}

int
screen_keys_fd(void)
{
    return screen_in != NULL ? fileno(screen_in) : -1;
}

enum screen_pump
screen_pump(void)
{
    ssize_t n;

    if (!screen_up)
        return SCREEN_PUMP_GONE;
    screen_flush();
    if (screen_nbuf == sizeof(screen_buf))
        return SCREEN_PUMP_FULL;
    n = read(STDIN_FILENO, screen_buf + screen_nbuf,
        sizeof(screen_buf) - screen_nbuf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return SCREEN_PUMP_OK;
    if (n <= 0)
        return SCREEN_PUMP_GONE;    /* EOF or EIO: the terminal is gone */
    screen_nbuf += (size_t)n;
    screen_nready = screen_complete(screen_buf, screen_nbuf);
    screen_flush();
    if (screen_nbuf == sizeof(screen_buf))
        return SCREEN_PUMP_FULL;
    return screen_nready < screen_nbuf ? SCREEN_PUMP_HELD : SCREEN_PUMP_OK;
}

bool
screen_pump_release(void)
{
    screen_nready = screen_nbuf;
    screen_flush();
    return screen_nbuf < sizeof(screen_buf);
}

/* SIGALRM: the loop has not turned for a while; say so on the screen.
 * Only async-signal-safe calls (clock_gettime, write, alarm). */
static void
screen_alarm_cb(int sig)
{
    struct timespec ts;
    int             saved = errno;
    long            stalled, col;
    char            m[64], num[24];
    size_t          n = 0, k = 0;

    (void)sig;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    stalled = (long)ts.tv_sec - (long)screen_sig_tick;
    if (stalled < SCREEN_STALE_S || !screen_sig_up) {
        errno = saved;
        return;
    }
    alarm(1);                   /* keep the count going */
    if (screen_sig_drawing) {
        errno = saved;
        return;                 /* never inside curses' own output */
    }
    screen_sig_stalled = (sig_atomic_t)stalled;
    /* "ESC 7, ESC [ 1 ; COL H, ESC [ 0 ; 7 m,  STALE Ns , ESC [ 0 m, ESC 8" */
    col = (long)screen_sig_cols - 12;
    if (col < 1)
        col = 1;
#define PUT(str) do { for (const char *q_ = (str); *q_; q_++) m[n++] = *q_; } \
    while (0)
#define PUTNUM(v) do { long v_ = (v); k = 0; do { num[k++] = (char)('0' + \
    v_ % 10); v_ /= 10; } while (v_ > 0 && k < 12); while (k > 0) \
    m[n++] = num[--k]; } while (0)
    PUT("\0337\033[1;");
    PUTNUM(col);
    PUT("H\033[0;1;7m STALE ");
    PUTNUM(stalled > 9999 ? 9999 : stalled);
    PUT("s \033[0m\0338");
#undef PUT
#undef PUTNUM
    (void)!write(STDOUT_FILENO, m, n);
    errno = saved;
}

void
screen_watchdog_start(void)
{
    struct sigaction sa;
    struct timespec  ts;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = screen_alarm_cb;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;   /* it only reports: interrupt nothing */
    if (sigaction(SIGALRM, &sa, NULL) != 0)
        return;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    screen_sig_tick = (sig_atomic_t)ts.tv_sec;
    screen_dog = true;
    alarm(SCREEN_STALE_S + 1);
}

int
screen_tick(void)
{
    struct timespec ts;
    int             stalled = 0;

    if (!screen_dog)
        return 0;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (screen_sig_stalled > 0) {
        /* The marker was drawn behind curses' back: repaint it all. */
        stalled = (int)ts.tv_sec - (int)screen_sig_tick;
        screen_sig_stalled = 0;
        screen_invalidate();
    }
    if ((sig_atomic_t)ts.tv_sec != screen_sig_tick) {
        screen_sig_tick = (sig_atomic_t)ts.tv_sec;
        alarm(SCREEN_STALE_S + 1);
    }
    return stalled;
}
