/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_pause.h - the library's one point where a test can hold it still
 *                (test_pause.c)
 */
#ifndef E2TRIM_TEST_PAUSE_H
#define E2TRIM_TEST_PAUSE_H

/*
 * With E2TRIM_TEST_PAUSE=<point>:<fifo> naming @point: "<point> <name>"
 * into <fifo>, then wait for a byte from <fifo>.go (the command's
 * handshake, src/cli/test_hooks.c).  Nothing without the variable.
 */
void test_pause_point(const char *point, const char *name);

#endif /* E2TRIM_TEST_PAUSE_H */
