/*
 * Questions asked on the terminal before the TUI takes it: a plain line
 * on /dev/tty (so it works when standard input carries the config), with
 * echo off for a password. Answers are secrets: never echoed when asked
 * so, never written anywhere by this module.
 */
#ifndef MCPTOP_FRONT_PROMPT_H
#define MCPTOP_FRONT_PROMPT_H

#include <stdbool.h>

/* The longest answer read, bytes; the rest of a longer line is dropped. */
#define PROMPT_MAX_ANSWER 4096

/*
 * Write question to the terminal and read one line (without its newline).
 * secret turns echo off while reading. The heap answer (caller wipes and
 * frees), or NULL with *cause (caller frees) when there is no terminal,
 * input ended, or SIGINT, SIGTERM or SIGHUP arrived (*interrupted is then
 * set). The terminal's modes are restored on every way out.
 */
char *prompt_ask(const char *question, bool secret, bool *interrupted,
    char **cause);

#endif
