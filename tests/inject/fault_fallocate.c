// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fault_fallocate.c - LD_PRELOAD shim: make one of e2trim's hole punches
 * fail, or a signal arrive while it runs
 *
 *   E2TRIM_FAULT=N:ERRNO   the Nth fallocate() fails with errno ERRNO
 *   E2TRIM_FAULT=N:INT     SIGINT arrives during the Nth (which succeeds);
 *   E2TRIM_FAULT=N:TERM    the same with SIGTERM
 *
 * Every other call goes through.  This is how the end-to-end tests see
 * main() turn a failed or interrupted request into an exit code and a
 * partial report; the image file back end is the one that needs no
 * device.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

typedef int (*fallocate_fn)(int, int, off_t, off_t);

static int calls;

/* 0: go through; else the errno to fail with, or -signal to raise. */
static int fault(void)
{
	const char *spec = getenv("E2TRIM_FAULT");
	char *what;
	long at;

	calls++;
	if (!spec)
		return 0;
	at = strtol(spec, &what, 10);
	if (at != calls || *what != ':')
		return 0;
	what++;
	if (!strcmp(what, "INT"))
		return -SIGINT;
	if (!strcmp(what, "TERM"))
		return -SIGTERM;
	return atoi(what);
}

static int call(const char *name, int fd, int mode, off_t off, off_t len)
{
	fallocate_fn real = (fallocate_fn)dlsym(RTLD_NEXT, name);
	int f = fault(), rc;

	if (f > 0) {
		errno = f;
		return -1;
	}
	rc = real(fd, mode, off, len);
	if (f < 0)
		raise(-f);
	return rc;
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
	return call("fallocate", fd, mode, off, len);
}

int fallocate64(int fd, int mode, off_t off, off_t len)
{
	return call("fallocate64", fd, mode, off, len);
}
