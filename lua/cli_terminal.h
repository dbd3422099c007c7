/* What the command line prints goes through streams that escape control characters, so
 * that text from a scenario (a name, a claim, a figure, an error message a scenario
 * raised) can never move the cursor, clear the screen or retitle the window, nor
 * overwrite a line with a carriage return: every byte below 0x20 but newline and tab,
 * DEL, and the C1 controls in UTF-8 (U+0080 to U+009F) are written as \xNN. */
#ifndef FLEETSIM_LUA_CLI_TERMINAL_H
#define FLEETSIM_LUA_CLI_TERMINAL_H

#include <stdio.h>

/* Replaces stdout and stderr with escaping streams over the same descriptors (stderr
 * unbuffered, stdout line-buffered on a terminal).  Call once, before printing. */
void cli_terminal_install(void);

/* The unescaped standard error, for the progress line's own "\r\033[K". */
FILE *cli_terminal_raw_stderr(void);

/* Escapes text into buf as the streams do (for a test; at most size - 1 bytes).
 * Returns the bytes written. */
size_t cli_terminal_escape(char *buf, size_t size, const char *text, size_t n);

#endif
