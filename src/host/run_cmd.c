// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * run_cmd.c - run a helper program (qemu-img, rbd) and keep what it prints
 *
 * posix_spawnp(), not fork(): the library may run in a threaded caller,
 * and only the descriptors named here reach the child (everything the
 * library opens is O_CLOEXEC).
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_cmd.h"

extern char **environ;

errcode_t run_cmd_capture(char *const argv[], char *out, size_t len,
			  int err_fd, int *status)
{
	posix_spawn_file_actions_t fa;
	int pfd[2], rc;
	size_t have = 0;
	ssize_t n;
	pid_t pid;

	*status = -1;
	if (!len)
		return EINVAL;
	if (pipe2(pfd, O_CLOEXEC))
		return errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	if (err_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	else
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null",
						 O_WRONLY, 0);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	while (!rc && have < len - 1 &&
	       (n = read(pfd[0], out + have, len - 1 - have)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		have += n;
	}
	close(pfd[0]);
	out[have] = '\0';
	if (rc)
		return rc;	/* posix_spawn's errno value */
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return 0;
}
