/* unit.h: what the cmocka unit tests that call tools share (unit.c): a shell command's
 * exit status, and its output. */
#ifndef GOTOP_TESTS_UNIT_H
#define GOTOP_TESTS_UNIT_H

/* Runs the command (printf-formatted, through sh -c); its exit status, or -1 when it did
 * not exit. */
int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The standard output of the command (printf-formatted, through sh -c); caller frees.
 * NULL when it cannot start or exits with a status other than 0. */
char *capture(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
