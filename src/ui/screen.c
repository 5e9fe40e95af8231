/*
 * curses, in one place: start and end it, turn theme roles into
 * attributes (colour pairs only when the terminal has colours and NO_COLOR
 * is unset), draw ui_lines clipped to the width, read keys and clicks.
 * Nothing else in mcptop writes to the terminal while curses is up.
 */
#include "ui/screen.h"

#include <curses.h>
#include <stdlib.h>
#include <term.h>
#include <sys/ioctl.h>
#include <unistd.h>

static bool   screen_up;
static attr_t screen_attr[ROLE__COUNT];
static attr_t screen_sel[ROLE__COUNT];

int
screen_init(void)
{
    const char *cup;

    if (screen_up)
        return 0;
    if (newterm(NULL, stdout, stdin) == NULL)
        return -1;
    /* A terminal that cannot move the cursor (TERM=dumb) cannot show a
     * table: give it back untouched. */
    cup = tigetstr("cup");
    if (cup == NULL || cup == (const char *)-1) {
        endwin();
        return -1;
    }
    screen_up = true;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED, NULL);
    mouseinterval(0);
    return 0;
}

void
screen_fini(void)
{
    if (!screen_up)
        return;
    screen_up = false;
    mousemask(0, NULL);
    curs_set(1);
    endwin();
    fflush(stdout);
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
    const struct theme_style *sel = &t->style[ROLE_SELECTION];
    bool                      defaults = false;

    if (colour) {
        start_color();
        defaults = use_default_colors() == OK;
    }
    for (int r = 0; r < ROLE__COUNT; r++) {
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
        sfg = st->fg == THEME_DEFAULT || r == ROLE_NORMAL ?
            screen_colour(sel->fg, &bold) : fg;
        sbg = screen_colour(sel->bg, NULL);
        if (!defaults) {
            sfg = sfg < 0 ? COLOR_WHITE : sfg;
            sbg = sbg < 0 ? COLOR_BLACK : sbg;
        }
        if (sfg == sbg && sbg >= 0)
            sfg = screen_colour(sel->fg, NULL);
        if (ROLE__COUNT + r + 1 < COLOR_PAIRS &&
            init_pair((short)(ROLE__COUNT + r + 1), sfg, sbg) == OK)
            screen_sel[r] |= COLOR_PAIR(ROLE__COUNT + r + 1);
        else
            screen_sel[r] |= A_REVERSE;
        if (bold)
            screen_sel[r] |= A_BOLD;
    }
    /* Cleared cells take the normal role's colours (a theme with its own
     * background paints the whole screen). */
    bkgdset(' ' | (screen_attr[ROLE_NORMAL] & A_COLOR));
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
    int           x = 0;

    if (y < 0 || y >= LINES)
        return;
    if (cols > COLS)
        cols = COLS;
    for (size_t i = 0; i < l->nspan && x < cols; i++) {
        const struct ui_span *sp = &l->span[i];
        int                   used;
        size_t                n;

        n = ui_text_fit(l->text + sp->off, sp->len, cols - x, &used);
        if (n == 0)
            continue;
        attrset(attr[sp->role]);
        mvaddnstr(y, x, l->text + sp->off, (int)n);
        x += used;
    }
    attrset(attr[l->base]);
    for (; x < cols; x++)
        mvaddch(y, x, ' ');
    attrset(A_NORMAL);
}

void
screen_end(void)
{
    refresh();
}

int
screen_key(int *click_y)
{
    int    ch = getch();
    MEVENT me;

    *click_y = -1;
    if (ch == ERR)
        return -1;
    if (ch == KEY_MOUSE) {
        if (getmouse(&me) == OK &&
            (me.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)))
            *click_y = me.y;
    }
    return ch;
}

/* The next refresh repaints everything (a full frame). */
void
screen_invalidate(void)
{
    clearok(curscr, TRUE);
}
