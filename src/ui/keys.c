/*
 * The key table: every key the TUI answers, mapped to one action (after
 * nnn's bindings[]). The help view prints this same table, so a new key is
 * one row here and shows in `?` at once.
 */
#include <curses.h>

#include "ui/ui.h"

#define CTRL(c) ((c) & 0x1f)

static const struct ui_binding keys_bindings[] = {
    { KEY_UP,    "Up",     UI_ACT_UP },
    { 'k',       "k",      UI_ACT_UP },
    { KEY_DOWN,  "Down",   UI_ACT_DOWN },
    { 'j',       "j",      UI_ACT_DOWN },
    { KEY_PPAGE, "PgUp",   UI_ACT_PAGE_UP },
    { CTRL('b'), "^B",     UI_ACT_PAGE_UP },
    { KEY_NPAGE, "PgDn",   UI_ACT_PAGE_DOWN },
    { CTRL('f'), "^F",     UI_ACT_PAGE_DOWN },
    { KEY_HOME,  "Home",   UI_ACT_HOME },
    { 'g',       "g",      UI_ACT_HOME },
    { KEY_END,   "End",    UI_ACT_END },
    { 'G',       "G",      UI_ACT_END },
    { 'Y',       "Y",      UI_ACT_SNAPSHOT },
    { 'y',       "y",      UI_ACT_COPY },
    { KEY_LEFT,  "Left",   UI_ACT_REPLAY_BACK },
    { KEY_RIGHT, "Right",  UI_ACT_REPLAY_FORWARD },
    { '[',       "[",      UI_ACT_REPLAY_SLOWER },
    { ']',       "]",      UI_ACT_REPLAY_FASTER },
    { '\r',      "Enter",  UI_ACT_DETAIL },
    { '\n',      "Enter",  UI_ACT_DETAIL },
    { KEY_ENTER, "Enter",  UI_ACT_DETAIL },
    { 'J',       "J",      UI_ACT_DETAIL_DOWN },
    { 'K',       "K",      UI_ACT_DETAIL_UP },
    { '/',       "/",      UI_ACT_FILTER },
    { ':',       ":",      UI_ACT_PALETTE },
    { 27,        "Esc",    UI_ACT_CANCEL },
    { 's',       "s",      UI_ACT_SORT },
    { '>',       ">",      UI_ACT_SORT },
    { '<',       "<",      UI_ACT_SORT_PREV },
    { 'I',       "I",      UI_ACT_SORT_INVERT },
    { 'N',       "N",      UI_ACT_SORT_NAME },
    { 'H',       "H",      UI_ACT_SORT_HEALTH },
    { 'L',       "L",      UI_ACT_SORT_LIVENESS },
    { 'A',       "A",      UI_ACT_SORT_AGE },
    { 'F',       "F",      UI_ACT_SORT_FAILURE },
    { 'R',       "R",      UI_ACT_SORT_RTT },
    { 'T',       "T",      UI_ACT_SORT_TOOLS },
    { ' ',       "space",  UI_ACT_MARK },
    { 'x',       "x",      UI_ACT_END_ONE },
    { 'X',       "X",      UI_ACT_END_MARKED },
    { 'r',       "r",      UI_ACT_REDIAL },
    { 'p',       "p",      UI_ACT_PING },
    { 'C',       "C",      UI_ACT_CANCEL_REQUEST },
    { 'P',       "P",      UI_ACT_PAUSE },
    { 'e',       "e",      UI_ACT_ENDINGS },
    { 'l',       "l",      UI_ACT_EVENTLOG },
    { 'o',       "o",      UI_ACT_PROCS },
    { 't',       "t",      UI_ACT_THEME },
    { 'b',       "b",      UI_ACT_GROUP },
    { 'c',       "c",      UI_ACT_COLUMNS },
    { KEY_F(2),  "F2",     UI_ACT_COLUMNS },
    { '\t',      "Tab",    UI_ACT_INCIDENTS },
    { 'm',       "m",      UI_ACT_MOUSE_TOGGLE },
    { '?',       "?",      UI_ACT_HELP },
    { KEY_F(1),  "F1",     UI_ACT_HELP },
    { 'q',       "q",      UI_ACT_QUIT },
    { KEY_MOUSE, "click",  UI_ACT_MOUSE },
    { KEY_RESIZE, "",      UI_ACT_RESIZE },
};

static const char *const keys_help[UI_ACT__COUNT] = {
#define X(id, text) [UI_ACT_##id] = text,
    UI_ACTIONS(X)
#undef X
};

enum ui_action
keys_action(int key)
{
    for (size_t i = 0; i < sizeof(keys_bindings) / sizeof(keys_bindings[0]);
        i++) {
        if (keys_bindings[i].key == key)
            return keys_bindings[i].action;
    }
    return UI_ACT_NONE;
}

const struct ui_binding *
keys_table(size_t *n)
{
    *n = sizeof(keys_bindings) / sizeof(keys_bindings[0]);
    return keys_bindings;
}

const char *
keys_action_help(enum ui_action a)
{
    if ((unsigned)a >= UI_ACT__COUNT)
        return "";
    return keys_help[a];
}

bool
keys_is_enter(int key)
{
    return key == '\r' || key == '\n' || key == KEY_ENTER;
}

bool
keys_is_backspace(int key)
{
    return key == KEY_BACKSPACE || key == 127 || key == 8;
}

bool
keys_is_kill_line(int key)
{
    return key == CTRL('u');
}

bool
keys_is_kill_word(int key)
{
    return key == CTRL('w');
}

int
keys_arrow(int key)
{
    return key == KEY_UP ? -1 : key == KEY_DOWN ? 1 : 0;
}

int
keys_move(int key)
{
    return key == '+' || key == KEY_SR ? -1 : key == '-' || key == KEY_SF ?
        1 : 0;
}

int
keys_direction(int key)
{
    if (key == KEY_RIGHT || key == '\t')
        return 1;
    if (key == KEY_LEFT || key == KEY_BTAB)
        return -1;
    return 0;
}
