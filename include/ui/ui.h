/*
 * The TUI's shared state and the contract between its parts: the key
 * table maps keys to actions; each mode is a struct ui_view in its own
 * view_*.c (its draw into screen lines, its keys, its status line's
 * hint), reached only through ui->view; tui.c owns the loop watchers, the
 * drawing and the quit sequence, and tui_key.c what a key does (the
 * prompt, then the mode, then the commands). Nothing here includes
 * curses: screen.c and keys.c are the only files that do.
 */
#ifndef MCPTOP_UI_UI_H
#define MCPTOP_UI_UI_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/fleet.h"
#include "engine/health.h"
#include "ui/eventlog.h"
#include "ui/line.h"
#include "ui/model.h"
#include "ui/theme.h"

#define UI_ACTIONS(X)                                               \
    X(NONE,        "")                                              \
    X(UP,          "move up")                                       \
    X(DOWN,        "move down")                                     \
    X(PAGE_UP,     "page up")                                       \
    X(PAGE_DOWN,   "page down")                                     \
    X(HOME,        "first row")                                     \
    X(END,         "last row")                                      \
    X(DETAIL,      "toggle the detail pane")                        \
    X(DETAIL_DOWN, "scroll the detail pane down")                   \
    X(DETAIL_UP,   "scroll the detail pane up; in the process view: end "\
                   "the selected orphan (TERM, then KILL), after y")  \
    X(FILTER,      "filter (see FILTER below; Ctrl-U clears the line)") \
    X(CANCEL,      "clear the filter / close a pane")               \
    X(SORT,        "sort by the next column")                       \
    X(SORT_PREV,   "sort by the previous column")                   \
    X(SORT_INVERT, "reverse the sort")                              \
    X(SORT_NAME,   "sort by name (again: reverse)")                 \
    X(SORT_HEALTH, "sort by health, worst first (again: reverse)")  \
    X(SORT_LIVENESS, "sort by liveness, worst first (again: reverse)") \
    X(SORT_AGE,    "sort by age, oldest observation first (again: reverse)") \
    X(SORT_FAILURE, "sort by current failure (again: reverse)")     \
    X(SORT_RTT,    "sort by round trip, slowest first (again: reverse)") \
    X(SORT_TOOLS,  "sort by tool count (again: reverse)")           \
    X(MARK,        "mark / unmark the selected server")             \
    X(END_ONE,     "end the selected session: y reconnects, s stops") \
    X(END_MARKED,  "end the marked sessions: y reconnects, s stops") \
    X(REDIAL,      "redial: end its session first, then dial; a stopped "\
                   "server dials again, a disabled one is enabled")  \
    X(PAUSE,       "pause or resume monitoring of the selected server") \
    X(PING,        "ping the selected server now")                  \
    X(CANCEL_REQUEST, "a tap: cancel the oldest request in flight (y "\
                   "cancels, n offers the next)")                   \
    X(ENDINGS,     "show / hide the endings pane")                  \
    X(PALETTE,     "the command palette: sort COL[,desc], filter EXPR, "\
                   "group WORD, columns LIST, view [save|delete|default] "\
                   "NAME, theme NAME, end, redial, log, help (Tab "  \
                   "completes; Up/Down: history)")                   \
    X(EVENTLOG,    "show / hide the event log: health, liveness, endings, "\
                   "newest first (/ filters it)")                     \
    X(PROCS,       "the process view: the stdio children as trees, and "\
                   "the orphans (K ends the selected one after y)")  \
    X(THEME,       "cycle the colour theme (remembered in tui.json)") \
    X(COLUMNS,     "choose the columns: Space shows/hides, + - move, " \
                   "Enter applies (:columns LIST too)")              \
    X(GROUP,       "group by cause, tag, host, transport, none (Enter "\
                   "on a header folds the group)")                   \
    X(INCIDENTS,   "focus the incident line: Left/Right (Tab/Shift-Tab) "\
                   "pick an entry, Enter (or a click) filters on its "\
                   "cause, on +N more groups by cause; Esc back") \
    X(HELP,        "this help")                                     \
    X(QUIT,        "quit: end open sessions first (again: at once)") \
    X(MOUSE,       "select a row; on the titles: sort; wheel scrolls") \
    X(MOUSE_TOGGLE, "mouse capture on / off (off: select and copy text)") \
    X(SNAPSHOT,    "write a Markdown snapshot (counts, incidents, every row, " \
                   "the selected detail) to the state directory") \
    X(COPY,        "copy the selected row (the detail, when open) to the " \
                   "terminal's clipboard (OSC 52)")               \
    X(REPLAY_BACK, "replay: 10 s back (space pauses, g/G start/end)") \
    X(REPLAY_FORWARD, "replay: 10 s forward")                     \
    X(REPLAY_SLOWER, "replay: half the speed")                     \
    X(REPLAY_FASTER, "replay: twice the speed")                    \
    X(RESIZE,      "")

enum ui_action {
#define X(id, text) UI_ACT_##id,
    UI_ACTIONS(X)
#undef X
    UI_ACT__COUNT
};

/* One key binding: the key (a curses key code or a character), its label
 * for the help, and its action. */
struct ui_binding {
    int            key;
    const char    *label;
    enum ui_action action;
};

struct screen_click;
struct ui;

/* Which keys a view reads before the rest of the TUI does (tui_key). */
enum ui_view_keys {
    /* The replay's keys first, then its own (key), then the commands. */
    UI_VIEW_KEYS_SHARED,
    /* Every key but the mouse's: no replay key, no command (the help:
     * any key goes back), and its status line is never the replay's. */
    UI_VIEW_KEYS_OWN,
    /* Every key as read, before anything else, the status line's message
     * kept (the column chooser: its own Enter, Esc, q). */
    UI_VIEW_KEYS_RAW,
};

/*
 * A mode of the TUI, what fills the screen between the header and the
 * status line (tmux's struct window_mode): one const table per mode, in
 * its own view_*.c; ui->view is the one on screen, and the TUI reaches a
 * mode only through it.
 */
struct ui_view {
    /* It comes on screen (ui_view_open; ui->view is still the one it
     * replaces): its scroll reset, where to go back remembered. NULL:
     * nothing to do. */
    void              (*open)(struct ui *ui);
    /* Draw it: rows screen rows from row y. */
    void              (*draw)(struct ui *ui, int y, int rows);
    /* One key: a its action, ch the key as read (0 for a turn of the
     * wheel, given as UP or DOWN). true when it took the key; otherwise
     * the TUI's commands act on a (tui_key.c). */
    bool              (*key)(struct ui *ui, enum ui_action a, int ch);
    /* A click (not the wheel), or NULL: clicks do nothing here. */
    void              (*click)(struct ui *ui, const struct screen_click *c);
    /* The keys the status line names when it has nothing else to say. */
    void              (*hint)(struct ui *ui, struct ui_line *l);
    enum ui_view_keys   keys;
};

/* The modes: the table (and its detail pane), the endings pane, the help,
 * the event log, the column chooser, the process view. */
extern const struct ui_view view_table_mode;
extern const struct ui_view view_endings_mode;
extern const struct ui_view view_help_mode;
extern const struct ui_view view_log_mode;
extern const struct ui_view view_columns_mode;
extern const struct ui_view view_procs_mode;

enum ui_prompt {
    UI_PROMPT_NONE,
    UI_PROMPT_FILTER,
    UI_PROMPT_COMMAND,          /* the palette's line (:) */
    UI_PROMPT_END_ONE,
    UI_PROMPT_END_MARKED,
    UI_PROMPT_CANCEL_REQUEST,   /* a tap's request: y cancels it */
    UI_PROMPT_END_ORPHAN,       /* the process view's K: y ends it */
};

/* The glyphs in use: UTF-8 or plain ASCII, picked from the locale. */
struct ui_glyphs {
    const char *health[HEALTH__COUNT];
    const char *live[LIVENESS__COUNT];
    const char *absent;
    const char *strip[LIVENESS__COUNT];
    const char *strip_absent;
    const char *strip_error;        /* answered with an error */
    const char *times;              /* "x" of a count: x12 */
    const char *stale;              /* before a value kept from before a
                                       failure */
    const char *changed;            /* the tool list changed */
    const char *sort_down;          /* the sort's natural order */
    const char *sort_up;            /* ...reversed */
    const char *ellipsis;
    const char *mark;
    const char *cursor;
    const char *sep;
    const char *hline;
    const char *ending;
};

/* The most table columns there are (view_table.c has the list). */
#define UI_COLUMNS_MAX 32

/* The column chooser (issue 34): every column, [x] shown or [ ] not, in
 * the order being edited; applied on Enter. */
struct ui_chooser {
    int    col[UI_COLUMNS_MAX];     /* view_table's column indexes */
    bool   on[UI_COLUMNS_MAX];
    size_t n;
    size_t sel;
    const struct ui_view *back;     /* the mode under it */
};

struct app_common;
struct prefs;
struct procs;
struct recording;
struct replay;
struct tui_opts;

struct ui {
    struct ev_loop      *loop;
    struct fleet        *fleet;
    const struct config *cfg;
    struct app_common   *common;    /* the sources, for a reload */
    struct recording    *rec;       /* --record, or NULL */
    struct replay       *replay;    /* mcptop replay: the event source,
                                       or NULL (live) */
    ev_timer             replay_w;  /* the replay clock's tick */
    ev_tstamp            replay_last;
    struct model         model;
    /* the table's columns (issue 34): the shown ones, left to right, by
     * view_table's index; ncolumns 0: the default set */
    signed char          columns[UI_COLUMNS_MAX];
    size_t               ncolumns;
    struct ui_chooser    chooser;
    /* tui.json (issue 34): the preferences, views and palette history;
     * prefs_path NULL when there is nowhere to keep them; prefs_frozen:
     * the file had a problem and is not written this run */
    struct prefs        *prefs;
    char                *prefs_path;
    bool                 prefs_frozen;
    size_t               history_pos;   /* Up/Down in the palette: nhistory
                                           is the line being typed */
    char                 history_line[160];
    const char          *start_theme;   /* --theme, or NULL */
    /* look */
    struct theme         theme;
    char               **themes;
    size_t               nthemes;
    size_t               theme_i;
    bool                 color;         /* colours in use (not NO_COLOR) */
    bool                 utf8;
    struct ui_glyphs     g;
    int                  rows, cols;
    /* what is shown */
    const struct ui_view *view;         /* the mode on screen */
    const struct ui_view *back;         /* the mode under the help */
    bool                 detail;
    int                  detail_scroll;
    int                  endings_scroll;
    int                  log_scroll;    /* 0: follows the newest */
    struct eventlog      eventlog;
    struct procs        *procs;         /* the process view's walk, or
                                           NULL (view_procs.c) */
    const struct tui_opts *start;   /* the TUI's own options, or NULL */
    int                  help_scroll;
    int                  table_y;       /* first table row on screen */
    int                  table_rows;    /* rows shown; 0 when hidden */
    bool                 incident_focus;    /* Tab: the incident line has
                                               the keys */
    size_t               incident_sel;  /* its entry selected, first 0 */
    /* prompt and messages */
    enum ui_prompt       prompt;
    char                 input[128];
    char                 palette[160];  /* the palette's line (:) */
    size_t               confirm_server;
    size_t               cancel_index;  /* the request offered, oldest 0 */
    char                 cancel_id[132];
    char                 message[256];
    enum ui_role         message_role;
    ev_tstamp            message_until; /* 0: until the next key */
    /* quitting */
    bool                 quitting;
    bool                 end_stops;     /* x answered s: end and stop */
    size_t               quit_total;    /* endings started by q */
    int64_t              quit_at;       /* epoch ms of the q */
    bool                *quit_busy;     /* per server: ending under way at
                                           the q */
    /* redraw */
    bool                 dirty;         /* a key's change: draw now */
    bool                 dirty_engine;  /* engine events: draw soon */
    bool                 model_stale;   /* engine events since rebuild */
    ev_tstamp            last_draw;
    ev_tstamp            last_rebuild;
    ev_tstamp            rebuild_gap;
    bool                 up;            /* curses is up */
    int                  exit_code;
    /* watchers */
    ev_io                input_w;       /* the terminal */
    ev_io                keys_w;        /* curses' key pipe */
    ev_timer             hold_w;        /* a cut escape sequence */
    ev_signal            winch_w, int_w, term_w, hup_w;
    ev_prepare           prepare_w;
    ev_timer             frame_w, age_w, quit_w;
};

/* keys.c: the action bound to key, UI_ACT_NONE if none. */
enum ui_action keys_action(int key);
/* The binding table, for the help view; *n entries. */
const struct ui_binding *keys_table(size_t *n);
const char *keys_action_help(enum ui_action a);
/* Keys the line editor of the filter prompt reads. */
bool keys_is_enter(int key);
bool keys_is_backspace(int key);
/* Ctrl-U: clear the line; Ctrl-W: delete the word before the cursor. */
bool keys_is_kill_line(int key);
bool keys_is_kill_word(int key);
/* The arrow keys alone (a line editor's history): -1 Up, 1 Down, else 0. */
int keys_arrow(int key);
/* Moving an entry of a list: -1 up (+, Shift-Up), 1 down (-, Shift-Down),
 * else 0. */
int keys_move(int key);
/* Moving along a line of entries: +1 for Right and Tab, -1 for Left and
 * Shift-Tab, 0 for any other key. */
int keys_direction(int key);

/* tui.c: a message on the status line, until the next key or for a few
 * seconds (UI_MESSAGE_S, a warning UI_WARNING_S). */
#define UI_MESSAGE_S 5.0
#define UI_WARNING_S 15.0
void ui_message(struct ui *ui, enum ui_role role, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* tui.c: ask for a redraw (drawn by the prepare watcher, rate-limited). */
void ui_dirty(struct ui *ui);
/* tui.c: the time the screen shows (epoch ms): now, or the replay's
 * clock. */
int64_t ui_now_ms(const struct ui *ui);
/* tui.c: a ui with its look (glyphs for the locale, --theme NAME or
 * dark); the caller sets the rest. tui_ui_free frees what this made. */
struct ui *tui_ui_new(const char *theme);
void tui_ui_free(struct ui *ui);
/*
 * tui.c: the screen over ui->fleet (made, with ui's look set): the model,
 * the terminal, the watchers, then the loop until q; the fleet is started
 * (or, for a replay, the replay's clock). The caller frees the fleet, then
 * model_done. 0, or EXIT_USAGE when the terminal cannot be used.
 */
int tui_run(struct ui *ui, bool no_mouse);
/* snapshot.c: Y: write the snapshot to the state directory and say
 * where; y: copy the selected row or detail by OSC 52. */
void snapshot_write(struct ui *ui);
void snapshot_copy(struct ui *ui);
/* tui_replay.c: start / stop the replay's clock. */
void tui_replay_start(struct ui *ui);
void tui_replay_stop(struct ui *ui);
/* tui_replay.c: a key the replay takes (pause, step, speed, start, end,
 * and the commands it refuses); true when it took it. */
bool tui_replay_key(struct ui *ui, enum ui_action a);
/* tui_replay.c: the header's REPLAY title and the timeline bar. */
struct ui_line;
void tui_replay_title(struct ui *ui, struct ui_line *l);
void tui_replay_status(struct ui *ui, struct ui_line *l);
/* tui.c: the smallest terminal drawn in; a smaller one shows a notice and
 * takes only q. */
#define TUI_MIN_COLS    40
#define TUI_MIN_ROWS    10
/* tui.c: q: end every session, then leave when every ending has settled
 * or by the teardown deadline plus a grace; a second q leaves at once. */
void tui_quit(struct ui *ui);

/* tui.c: put view v on screen (its open first). A view going back to
 * the one under it sets ui->view itself, so that one's state is kept. */
void ui_view_open(struct ui *ui, const struct ui_view *v);

/* tui_key.c: act on one key ch (click: where a mouse event happened). */
void tui_key(struct ui *ui, int ch, const struct screen_click *click);
/* tui_key.c: what action a does, as its key would (:end, :redial). */
void tui_key_action(struct ui *ui, enum ui_action a);
/* tui_key.c: say the table's sort on the status line. */
void tui_key_sort_message(struct ui *ui);

/* view_table.c: the table's columns (issue 34). Indexes run from 1 to
 * view_table_ncolumns() - 1 (0 is the mark, always first). */
size_t view_table_ncolumns(void);
/* The word of column c (":columns name,rtt", a view's "columns"): lower
 * case, the title's first word unless named otherwise; NULL for 0. */
const char *view_table_column_word(int c);
const char *view_table_column_title(int c);
/* The column whose word is the len bytes at word (any case), or -1. */
int view_table_column_of(const char *word, size_t len);
/* NAME and HEALTH: always shown (NAME always first). */
bool view_table_column_fixed(int c);
/* The columns shown, left to right, into out (UI_COLUMNS_MAX); their
 * count. */
size_t view_table_columns(const struct ui *ui, int *out);
/* Show these n columns in this order (NAME put first, HEALTH added when
 * left out; repeats and bad indexes skipped). */
bool view_table_set_columns(struct ui *ui, const int *cols, size_t n);
/* The columns shown as "name,health,..." into buf (n bytes). */
void view_table_columns_text(const struct ui *ui, char *buf, size_t n);

/* palette.c: run one palette line (":sort rtt"); says on the status line
 * what it did or why not. */
void palette_run(struct ui *ui, const char *line);
/* Tab on the palette's line buf (n bytes): complete the command, a --sort
 * column after "sort ", a grouping after "group ", a view after "view ",
 * a theme after "theme ", a column after "columns " (after the last
 * comma), a tag after "tag:" and a server after "name:" in "filter " (the
 * longest common prefix; a space after a unique match). false when
 * nothing matched. */
bool palette_complete(struct ui *ui, char *buf, size_t n);
/* Up (older true) or Down in the palette: the history's line. */
void palette_history(struct ui *ui, bool older);

/* view_frame.c: the header (rows screen rows from row y) and the status
 * line (row y), around whichever mode is on screen. */
void view_header_draw(struct ui *ui, int y, int rows);
void view_status_draw(struct ui *ui, int y);
/* view_detail.c: the detail pane of the table's mode, rows screen rows
 * from row y, and its keys (J/K scroll; true when taken). */
void view_detail_draw(struct ui *ui, int y, int rows);
bool view_detail_key(struct ui *ui, enum ui_action a);
/* The detail of server i as text lines, to out (a snapshot, a copy). */
void view_detail_text(struct ui *ui, size_t i, FILE *out);
/*
 * view_frame.c, the incident line's entries (issue 34), as last drawn:
 * how many can be picked (the entries shown, then "+N more" when some did
 * not fit), 0 when none or the line is not on screen.
 */
size_t view_incident_count(const struct ui *ui);
/* Entry i picked (Enter, a click): the table's filter becomes the one
 * that keeps exactly the servers it counts ("kind:timeout", "kind:
 * http_status http:502 reason:bad_gateway", "tools:changed"); "+N more"
 * groups the table by cause instead. The focus goes back to the table. */
void view_incident_apply(struct ui *ui, size_t i);
/* The entry drawn at screen row y, column x, or -1. */
long view_incident_at(const struct ui *ui, int y, int x);
/* A key while the incident line has the focus: moves, picks, or (Esc)
 * leaves it; true when the key was taken. Any other key leaves the focus
 * and returns false, so it does what it always does. */
bool view_incident_key(struct ui *ui, int ch);
/* The header's three lines as text, to out. */
void view_header_text(struct ui *ui, FILE *out);
/* view_procs.c, the process view (view_procs_mode; K asks, in the
 * END_ORPHAN prompt, to end the selected orphan): prompt writes that
 * prompt's question, answer takes its y/n; free frees the walk and stops
 * an ending under way. */
void view_procs_prompt(struct ui *ui, struct ui_line *l);
void view_procs_answer(struct ui *ui, int ch);
void view_procs_free(struct ui *ui);
/* An entry was logged: a scrolled log keeps showing the same lines. */
void view_log_grew(struct ui *ui, const struct eventlog_entry *en);

/* fmt.c: small formatters shared by the views. */
void fmt_age(char *buf, size_t n, int64_t ms);
void fmt_clock(char *buf, size_t n, int64_t epoch_ms, bool millis);
enum ui_role fmt_live_role(const struct liveness *l);
/* The role of a health state: ok reachable, degraded warning, down
 * unreachable, the operator's states dim. */
enum ui_role fmt_health_role(enum health_state h);
/* The health word with its glyph: "● ok", "◐ degraded", "‖ paused"... */
void fmt_health(const struct ui *ui, char *buf, size_t n,
    enum health_state h);
enum ui_role fmt_delivered_role(enum delivered d);
/* The liveness word with its glyph: "● reachable", "— absent"... */
void fmt_liveness(const struct ui *ui, char *buf, size_t n,
    const struct liveness *l);
/* The HTTP status cell: "502 bad_gateway", "403 challenge", "404", ""
 * for none. */
void fmt_http(char *buf, size_t n, long status, enum failure_reason reason);
/* The role of an HTTP status cell: warning for what the operator can act
 * on (auth, forbidden, challenge), else normal (current) or dim (old). */
enum ui_role fmt_reason_role(enum failure_reason reason, bool current);
/* The role of a failure kind: the liveness it supports (unreachable,
 * unknown), warning when the server answered with an error. */
enum ui_role fmt_kind_role(enum failure_kind k);
/* The failure streak: "x12" ("x100+" when the whole history failed), ""
 * when the last exchange completed. */
void fmt_failing(const struct ui *ui, char *buf, size_t n,
    const struct server *s);
/* A server's name, sanitized into buf. */
void fmt_name(char *buf, size_t n, const struct server *s);
/* One ending as a line: time, [server,] outcome, status or exit,
 * duration, settlement, notes. */
void fmt_ending(const struct ui *ui, struct ui_line *l,
    const struct ending *e, bool with_server);

/* A scrolling text pane: lines past `skip` are drawn from row y, at most
 * `rows` of them; n counts every line offered (for clamping the scroll). */
struct ui_out {
    struct ui *ui;
    int        y, rows, skip, n;
    FILE      *sink;        /* not NULL: every line goes here as text,
                               not to the screen (a snapshot, a copy) */
};
void ui_out_line(struct ui_out *o, const struct ui_line *l);

#endif
