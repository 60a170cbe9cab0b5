// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_pause.c - the library's one point where a test can hold it still
 *
 * The command's pause points (src/cli/test_hooks.c) ride on progress
 * reports; a point inside e2trim_open() has none.  "opened" holds a
 * target between e2trim's own open of the name and the next open of the
 * same object (libext2fs's, or qemu-nbd's of a VM image), so that a test can re-point the name there (issue
 * 41.3) and see that no later open follows it.  The handshake is the
 * command's: "<point> <name>\n" into the FIFO, one byte back from
 * <FIFO>.go.  Only a test sets the variable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_pause.h"

static int open_retry(const char *path, int flags)
{
	int fd;

	do
		fd = open(path, flags | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	return fd;
}

void test_pause_point(const char *point, const char *name)
{
	const char *spec = getenv("E2TRIM_TEST_PAUSE");
	size_t n = strlen(point);
	char go[4096], c;
	ssize_t got;
	int fd;

	if (!spec || strncmp(spec, point, n) || spec[n] != ':' || !spec[n + 1])
		return;
	fd = open_retry(spec + n + 1, O_WRONLY);
	if (fd < 0 || dprintf(fd, "%s %s\n", point, name) < 0) {
		/* a test that asked for a pause must not run on unheld */
		fprintf(stderr, "e2trim: E2TRIM_TEST_PAUSE: %s: %s\n",
			spec + n + 1, strerror(errno));
		_exit(99);
	}
	close(fd);
	snprintf(go, sizeof(go), "%s.go", spec + n + 1);
	fd = open_retry(go, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "e2trim: E2TRIM_TEST_PAUSE: %s: %s\n", go,
			strerror(errno));
		_exit(99);
	}
	do
		got = read(fd, &c, 1);
	while (got < 0 && errno == EINTR);
	close(fd);
}
