// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fault_fallocate.c - LD_PRELOAD shim: make one of e2trim's requests (a
 * hole punch, or a discard ioctl) fail, or a signal arrive while it runs
 *
 *   E2TRIM_FAULT=N:ERRNO   the Nth request fails with errno ERRNO
 *   E2TRIM_FAULT=N:INT     SIGINT arrives during the Nth (which succeeds);
 *   E2TRIM_FAULT=N:TERM    the same with SIGTERM
 *   E2TRIM_NO_URING=1      io_uring_queue_init() fails with ENOSYS, as
 *                          where io_uring is disabled: e2trim must fall
 *                          back to one ioctl at a time
 *   E2TRIM_URING_SHORT=1   io_uring_submit() takes none of the requests
 *                          it is given: the batch of bitmap reads must
 *                          not be trusted, and libext2fs reads them
 *
 * Every other call goes through.  This is how the end-to-end tests see
 * main() turn a failed or interrupted request into an exit code and a
 * partial report.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <linux/fs.h>

typedef int (*fallocate_fn)(int, int, off_t, off_t);
typedef int (*ioctl_fn)(int, unsigned long, void *);

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

int ioctl(int fd, unsigned long req, ...);

int ioctl(int fd, unsigned long req, ...)
{
	ioctl_fn real = (ioctl_fn)dlsym(RTLD_NEXT, "ioctl");
	va_list ap;
	void *arg;
	int f = 0, rc;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == BLKDISCARD || req == BLKSECDISCARD || req == BLKZEROOUT)
		f = fault();
	if (f > 0) {
		errno = f;
		return -1;
	}
	rc = real(fd, req, arg);
	if (f < 0)
		raise(-f);
	return rc;
}

struct io_uring;
int io_uring_queue_init(unsigned int entries, struct io_uring *ring,
			unsigned int flags);

/* Only with E2TRIM_NO_URING: else liburing's own. */
int io_uring_queue_init(unsigned int entries, struct io_uring *ring,
			unsigned int flags)
{
	int (*real)(unsigned int, struct io_uring *, unsigned int);

	if (getenv("E2TRIM_NO_URING"))
		return -ENOSYS;
	real = (int (*)(unsigned int, struct io_uring *, unsigned int))
		dlsym(RTLD_NEXT, "io_uring_queue_init");
	return real ? real(entries, ring, flags) : -ENOSYS;
}

int io_uring_submit(struct io_uring *ring);

/* With E2TRIM_URING_SHORT, nothing is submitted; else liburing's own. */
int io_uring_submit(struct io_uring *ring)
{
	int (*real)(struct io_uring *);

	if (getenv("E2TRIM_URING_SHORT"))
		return 0;
	real = (int (*)(struct io_uring *))dlsym(RTLD_NEXT, "io_uring_submit");
	return real ? real(ring) : -ENOSYS;
}
