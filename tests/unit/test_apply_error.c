// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_apply_error.c - a failed request, from the back end to the result
 *
 * Inside the library a failed request is an errno value (errcode_t, as
 * com_err takes it); the result keeps the kernel's sign, -errno, and
 * where it failed (e2trim.h: error_errno, error_start_bytes).  fallocate()
 * is wrapped (-Wl,--wrap=fallocate64, its name with 64-bit offsets): the
 * N-th hole punch fails with the errno asked for, and every punch is
 * recorded.  On a real image (mke2fs,
 * debugfs: 40 free extents) the tests check that
 *  - the image file back end returns the errno itself, not -errno
 *    (target_file_init(), its request through target_trim());
 *  - e2trim_apply() returns E2TRIM_ERR_DISCARD (E2TRIM_ERR_DISCARD_
 *    UNSUPPORTED for EOPNOTSUPP on the first request), and the result
 *    holds -errno, the failed punch's offset, and the punches before it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <setjmp.h>
#include <cmocka.h>
#include "unit_sh.h"

#include "e2trim.h"
#include "target.h"

static char dir[] = "/tmp/e2trim-test-apply-error.XXXXXX";
static char img[128];

static struct {
	unsigned int punches;	/* hole punches seen */
	unsigned int fail_at;	/* this one (from 1) fails; 0: none */
	int fail_errno;
	off_t off[512];
} fx;

int __real_fallocate64(int fd, int mode, off_t off, off_t len);
int __wrap_fallocate64(int fd, int mode, off_t off, off_t len);

int __wrap_fallocate64(int fd, int mode, off_t off, off_t len)
{
	if (!(mode & FALLOC_FL_PUNCH_HOLE))
		return __real_fallocate64(fd, mode, off, len);
	if (fx.punches < sizeof(fx.off) / sizeof(fx.off[0]))
		fx.off[fx.punches] = off;
	if (++fx.punches == fx.fail_at) {
		errno = fx.fail_errno;
		return -1;
	}
	return __real_fallocate64(fd, mode, off, len);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(img, sizeof(img), "%s/frag.img", dir);
	/* 80 files of 64 KiB, every other one removed: 40 free extents */
	sh("PATH=$PATH:/sbin:/usr/sbin; cd %s && "
	   "mke2fs -q -F -t ext4 -b 4096 -g 4096 frag.img 128M >/dev/null 2>&1 && "
	   "head -c 65536 /dev/urandom > data && "
	   "for i in $(seq 1 80); do echo \"write data f$i\"; done > cmds && "
	   "for i in $(seq 1 2 80); do echo \"rm f$i\"; done >> cmds && "
	   "debugfs -w -f cmds frag.img >/dev/null 2>&1", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf %s", dir);
	return 0;
}

/* A fresh copy, every block allocated: each free extent is one punch. */
static void fresh_copy(char *path, size_t len)
{
	static unsigned int n;

	snprintf(path, len, "%s/copy%u.img", dir, n++);
	sh("cp %s %s && fallocate -l 128M %s", img, path, path);
	memset(&fx, 0, sizeof(fx));
}

static void test_file_request_errno(void **state)
{
	struct target t;
	char path[160];
	int fd;

	(void)state;
	fresh_copy(path, sizeof(path));
	fd = open(path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	memset(&t, 0, sizeof(t));
	assert_int_equal(target_file_init(&t, fd, TRIM_DISCARD), 0);
	fx.fail_at = 2;
	fx.fail_errno = EIO;
	assert_int_equal(target_trim(&t, 64 << 20, 1 << 20), 0);
	/* the errno itself: positive, as com_err and e2fsprogs take it */
	assert_int_equal(target_trim(&t, 80 << 20, 1 << 20), EIO);
	assert_int_equal(t.error, EIO);
	assert_int_equal(t.error_start, 80 << 20);
	assert_int_equal(target_finish(&t), EIO);
	target_close(&t);
	close(fd);
}

static void apply_failing(unsigned int at, int err, errcode_t want)
{
	const struct e2trim_result *r;
	struct e2trim *t;
	char path[160];

	fresh_copy(path, sizeof(path));
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_open(t, path), 0);
	fx.fail_at = at;
	fx.fail_errno = err;
	assert_int_equal(e2trim_apply(t, NULL, NULL), want);
	r = e2trim_result(t);
	assert_non_null(r);
	assert_true(fx.punches >= at);
	/* the kernel's sign in the result, and where */
	assert_int_equal(r->error_errno, -err);
	assert_int_equal(r->error_start_bytes, fx.off[at - 1]);
	assert_int_equal(r->requests, at - 1);
	e2trim_free(t);
}

static void test_apply_eio_in_the_middle(void **state)
{
	(void)state;
	apply_failing(3, EIO, E2TRIM_ERR_DISCARD);
}

static void test_apply_unsupported_first(void **state)
{
	(void)state;
	apply_failing(1, EOPNOTSUPP, E2TRIM_ERR_DISCARD_UNSUPPORTED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_request_errno),
		cmocka_unit_test(test_apply_eio_in_the_middle),
		cmocka_unit_test(test_apply_unsupported_first),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
