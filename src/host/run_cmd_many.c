// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * run_cmd_many.c - run several helper programs at once, keep what each
 *                  prints
 *
 * The rbd command spends ~0.15 s starting and reaching the cluster for
 * an answer that takes it a few milliseconds: asked one after another,
 * the questions e2trim has about an RBD image (watchers, locks, its
 * granularity, its size in the cluster, its allocated extents) cost more
 * than the trim.  Asked at once they cost about one.  posix_spawnp() as
 * in run_cmd.c; stdout into a buffer that grows to @max_len.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_cmd_many.h"

extern char **environ;

#define MAX_JOBS 8
#define CHUNK (64U << 10)

static errcode_t start_job(struct cmd_job *j, int *rfd)
{
	posix_spawn_file_actions_t fa;
	int pfd[2], rc;

	if (pipe2(pfd, O_CLOEXEC))
		return errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	if (j->err_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, j->err_fd, 2);
	else
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null",
						 O_WRONLY, 0);
	rc = posix_spawnp(&j->pid, j->argv[0], &fa, NULL, j->argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (rc) {
		close(pfd[0]);
		return rc;
	}
	*rfd = pfd[0];
	return 0;
}

/* Read what is there; 1 at the end of its output (or past max_len). */
static int drain(struct cmd_job *j, int fd)
{
	size_t room = j->cap - j->len;
	ssize_t n;
	char *p;

	if (room < 2) {
		if (j->cap >= j->max_len) {
			j->truncated = 1;
			return 1;	/* it gets SIGPIPE if it writes on */
		}
		p = realloc(j->out, j->cap + CHUNK);
		if (!p) {
			j->truncated = 1;
			return 1;
		}
		j->out = p;
		j->cap += CHUNK;
		room = j->cap - j->len;
	}
	n = read(fd, j->out + j->len, room - 1);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : 1;
	if (n == 0)
		return 1;
	j->len += n;
	j->out[j->len] = '\0';
	return 0;
}

errcode_t run_cmd_many(struct cmd_job *jobs, int n)
{
	struct pollfd pfd[MAX_JOBS];
	int open = 0, i;
	errcode_t err;

	if (n > MAX_JOBS)
		return EINVAL;
	for (i = 0; i < n; i++) {
		jobs[i].status = -1;
		jobs[i].start_errno = 0;
		jobs[i].len = jobs[i].cap = 0;
		jobs[i].truncated = 0;
		jobs[i].out = malloc(CHUNK);
		pfd[i].fd = -1;
		pfd[i].events = POLLIN;
		if (!jobs[i].out) {
			jobs[i].start_errno = ENOMEM;
			continue;
		}
		jobs[i].cap = CHUNK;
		jobs[i].out[0] = '\0';
		err = start_job(&jobs[i], &pfd[i].fd);
		if (err)
			jobs[i].start_errno = (int)err;
		else
			open++;
	}
	while (open > 0) {
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < n; i++) {
			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			if (drain(&jobs[i], pfd[i].fd)) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open--;
			}
		}
	}
	for (i = 0; i < n; i++) {
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
		if (jobs[i].start_errno)
			continue;
		while (waitpid(jobs[i].pid, &jobs[i].status, 0) < 0 &&
		       errno == EINTR)
			;
	}
	return 0;
}

void cmd_job_free(struct cmd_job *j)
{
	free(j->out);
	j->out = NULL;
	j->len = j->cap = 0;
}
