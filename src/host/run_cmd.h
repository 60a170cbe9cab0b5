/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * run_cmd.h - run a helper program and keep what it prints
 */
#ifndef E2TRIM_RUN_CMD_H
#define E2TRIM_RUN_CMD_H

#include <stddef.h>
#include <et/com_err.h>

/*
 * Run @argv (argv[0] looked up in PATH) with stdin from /dev/null, its
 * stdout into @out (@len bytes with the NUL; what does not fit is cut
 * off, and the program gets SIGPIPE if it writes on) and its stderr into
 * @err_fd (-1: /dev/null), and wait for it.  Returns 0 with its wait
 * status in *@status, or the errno value of why it could not be started
 * (ENOENT: not in PATH).
 */
errcode_t run_cmd_capture(char *const argv[], char *out, size_t len,
			  int err_fd, int *status);

#endif /* E2TRIM_RUN_CMD_H */
