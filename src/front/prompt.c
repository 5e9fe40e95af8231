/*
 * One question on /dev/tty, read a byte at a time until the newline so
 * that nothing after it is consumed. A password is read with ECHO off,
 * and the terminal's modes come back whatever ends the read: the signals
 * that would end mcptop only interrupt the read (no SA_RESTART), then
 * the old handlers are put back.
 */
#include "front/prompt.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "util/str.h"
#include "util/xmalloc.h"

static volatile sig_atomic_t prompt_signalled;

/* SIGINT, SIGTERM, SIGHUP during a question: note it; read returns. */
static void
prompt_signal_cb(int sig)
{
    (void)sig;
    prompt_signalled = 1;
}

/* Write all of s to fd (a terminal); errors are ignored. */
static void
prompt_write(int fd, const char *s)
{
    size_t  len = strlen(s);
    ssize_t n;

    while (len > 0) {
        n = write(fd, s, len);
        if (n < 0 && errno == EINTR && !prompt_signalled)
            continue;
        if (n <= 0)
            return;
        s += n;
        len -= (size_t)n;
    }
}

/* See prompt.h. */
char *
prompt_ask(const char *question, bool secret, bool *interrupted,
    char **cause)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    struct sigaction sa, old[3];
    struct termios   saved, quiet;
    bool             echo_off = false;
    char            *answer = NULL;
    size_t           len = 0;
    char             c;
    ssize_t          n;
    bool             eof = false;
    int              fd;
    size_t           i;

    *interrupted = false;
    *cause = NULL;
    fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        *cause = str_printf("no terminal to ask on (/dev/tty: %s)",
            strerror(errno));
        return NULL;
    }
    prompt_signalled = 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = prompt_signal_cb;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < 3; i++)
        sigaction(sigs[i], &sa, &old[i]);
    if (secret && tcgetattr(fd, &saved) == 0) {
        quiet = saved;
        quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
        echo_off = tcsetattr(fd, TCSAFLUSH, &quiet) == 0;
    }
    prompt_write(fd, question);
    answer = xmalloc(PROMPT_MAX_ANSWER + 1);
    for (;;) {
        if (prompt_signalled)
            break;
        n = read(fd, &c, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            eof = true;
            break;
        }
        if (c == '\n')
            break;
        if (len < PROMPT_MAX_ANSWER)
            answer[len++] = c;
    }
    answer[len] = '\0';
    if (len > 0 && answer[len - 1] == '\r')
        answer[--len] = '\0';
    if (echo_off) {
        tcsetattr(fd, TCSAFLUSH, &saved);
        prompt_write(fd, "\n");
    }
    for (i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    if (prompt_signalled || (eof && len == 0)) {
        explicit_bzero(answer, PROMPT_MAX_ANSWER + 1);
        free(answer);
        if (prompt_signalled) {
            *interrupted = true;
            *cause = str_printf("interrupted");
        } else {
            *cause = str_printf("no answer (end of input)");
        }
        prompt_write(fd, "\n");
        close(fd);
        return NULL;
    }
    close(fd);
    return answer;
}
