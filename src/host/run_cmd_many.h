/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * run_cmd_many.h - run several helper programs at once, keep what each
 *                  prints
 */
#ifndef E2TRIM_RUN_CMD_MANY_H
#define E2TRIM_RUN_CMD_MANY_H

#include <stddef.h>
#include <sys/types.h>
#include <et/com_err.h>

struct cmd_job {
	char *const *argv;	/* in: argv[0] looked up in PATH */
	int err_fd;		/* in: its stderr, -1: /dev/null */
	size_t max_len;		/* in: stdout kept up to this many bytes */
	char *out;		/* out: its stdout, NUL-terminated (malloc) */
	size_t len, cap;
	int status;		/* out: its wait status, -1: not started */
	int start_errno;	/* out: why not (ENOENT: not in PATH) */
	unsigned int truncated : 1;	/* out: more than max_len */
	pid_t pid;
};

/*
 * Start the @n (at most 8) jobs together, stdin from /dev/null, and wait
 * for all of them.  0, or EINVAL (more than 8); each job's outcome is
 * in its status (and start_errno); cmd_job_free() each after.
 */
errcode_t run_cmd_many(struct cmd_job *jobs, int n);

void cmd_job_free(struct cmd_job *j);

#endif /* E2TRIM_RUN_CMD_MANY_H */
