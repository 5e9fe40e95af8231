/*
 * The terminal UI command: `mcptop`, `mcptop -c FILE`, `mcptop URL`,
 * `mcptop tui [-c FILE | URL] [--theme NAME|FILE] [--log FILE]`.
 */
#ifndef MCPTOP_UI_TUI_H
#define MCPTOP_UI_TUI_H

/* Run the TUI. argv[0] is the command word (or the program); the options
 * follow. Returns the exit code: 0 after q, SIGINT, SIGTERM or SIGHUP; 2
 * on usage or config errors (printed to stderr before the screen is
 * taken). */
int tui_main(int argc, char **argv);
/* `mcptop replay FILE ...`: the TUI over a recording (tui_replay.c). */
int tui_replay_main(int argc, char **argv);

#endif
