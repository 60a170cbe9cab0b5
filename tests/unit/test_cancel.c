// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_cancel.c - the cancel flag, set from the library's own callbacks
 *
 * No timing: the progress or extent callback sets the flag itself, at a
 * known point.  On a real image (mke2fs, debugfs; 8 groups, fragmented
 * free space, every block allocated in the file) the tests check that
 *  - verification stops at the next group (no progress report after the
 *    cancel), returns E2TRIM_ERR_INTERRUPTED and can run again;
 *  - apply cancelled while it verifies gives no extent, trims nothing;
 *  - every extent the callback was given was trimmed: the listed bytes
 *    are the result's (dry run), and each listed range is a hole in the
 *    file afterwards (real trim, lseek SEEK_DATA is the oracle).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "unit_sh.h"

#include "e2trim.h"

static char dir[] = "/tmp/e2trim-test-cancel.XXXXXX";
static char img[128], copy[128];

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(img, sizeof(img), "%s/frag.img", dir);
	snprintf(copy, sizeof(copy), "%s/copy.img", dir);
	/* 80 files of 64 KiB, every other one removed: 40 free extents */
	sh("PATH=$PATH:/sbin:/usr/sbin; cd %s && "
	   "mke2fs -q -F -t ext4 -b 4096 -g 4096 frag.img 128M >/dev/null 2>&1 && "
	   "head -c 65536 /dev/urandom > data && "
	   "for i in $(seq 1 80); do echo \"write data f$i\"; done > cmds && "
	   "for i in $(seq 1 2 80); do echo \"rm f$i\"; done >> cmds && "
	   "debugfs -w -f cmds frag.img >/dev/null 2>&1 && "
	   "fallocate -l 128M frag.img", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf %s", dir);
	return 0;
}

struct watch {
	volatile sig_atomic_t cancel;
	enum e2trim_stage stage;	/* cancel at its first report with
					   bytes done */
	unsigned int reports_after;	/* of any stage, once cancelled */
	uint64_t last_done, total;
	unsigned int cancel_at_extent;	/* cancel in the N-th extent call */
	unsigned int extents;
	uint64_t listed_bytes;
	uint64_t start[512], len[512];
};

static void progress(void *priv, enum e2trim_stage stage, uint64_t done,
		     uint64_t total)
{
	struct watch *w = priv;

	if (w->cancel) {
		w->reports_after++;
		return;
	}
	w->last_done = done;
	w->total = total;
	if (stage == w->stage && done > 0)
		w->cancel = 1;
}

static int extent(void *priv, uint64_t start, uint64_t len)
{
	struct watch *w = priv;

	assert_true(w->extents < 512);
	w->start[w->extents] = start;
	w->len[w->extents++] = len;
	w->listed_bytes += len;
	if (w->extents == w->cancel_at_extent)
		w->cancel = 1;
	return 0;
}

static struct e2trim *open_watched(const char *path, int dryrun,
				   struct watch *w)
{
	struct e2trim *t;

	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_set_flags(t, dryrun ? E2TRIM_FLAG_DRYRUN : 0),
			 0);
	assert_int_equal(e2trim_open(t, path), 0);
	e2trim_set_cancel(t, &w->cancel);
	e2trim_set_progress(t, progress, w);
	return t;
}

/* Verification stops at the next group and can be asked again. */
static void cancel_in_verify(void **state)
{
	static struct watch w = { .stage = E2TRIM_STAGE_VERIFY };
	struct e2trim *t = open_watched(img, 1, &w);
	char msg[512];

	(void)state;
	assert_int_equal(e2trim_verify(t), E2TRIM_ERR_INTERRUPTED);
	assert_int_equal(w.cancel, 1);
	assert_true(w.last_done < w.total);
	assert_int_equal(w.reports_after, 0);
	assert_true(e2trim_result(t)->interrupted);
	/* said once, not "interrupted (interrupted)" */
	e2trim_message(t, E2TRIM_ERR_INTERRUPTED, msg, sizeof(msg));
	assert_null(strstr(msg, "(interrupted)"));
	/* nothing was verified: apply, still cancelled, verifies no further */
	assert_int_equal(e2trim_apply(t, extent, &w), E2TRIM_ERR_INTERRUPTED);
	assert_int_equal(w.extents, 0);
	assert_int_equal(e2trim_result(t)->bytes_trimmed, 0);
	w.cancel = 0;
	w.stage = 0;
	assert_int_equal(e2trim_verify(t), 0);
	assert_int_equal(w.last_done, w.total);
	e2trim_free(t);
}

/* The extent callback cancels: what it was given is what was counted. */
static void cancel_from_extent_callback(void **state)
{
	static struct watch w = { .cancel_at_extent = 3 };
	struct e2trim *t = open_watched(img, 1, &w);

	(void)state;
	assert_int_equal(e2trim_apply(t, extent, &w), E2TRIM_ERR_INTERRUPTED);
	assert_int_equal(w.extents, 3);
	assert_int_equal(e2trim_result(t)->bytes_trimmed, w.listed_bytes);
	assert_true(e2trim_result(t)->interrupted);
	e2trim_free(t);
}

/*
 * A real trim cancelled from the progress callback: every range the
 * extent callback was given is a hole now, and fewer bytes than the plan
 * were trimmed.
 */
static void cancel_in_trim(void **state)
{
	static struct watch w = { .stage = E2TRIM_STAGE_TRIM };
	struct e2trim *t;
	unsigned int i;
	off_t data;
	int fd;

	(void)state;
	sh("cp %s %s", img, copy);
	t = open_watched(copy, 0, &w);
	assert_int_equal(e2trim_apply(t, extent, &w), E2TRIM_ERR_INTERRUPTED);
	assert_true(w.extents > 0);
	assert_true(e2trim_result(t)->bytes_trimmed >= w.listed_bytes);
	assert_true(e2trim_result(t)->bytes_trimmed < w.total);
	e2trim_free(t);
	fd = open(copy, O_RDONLY);
	assert_true(fd >= 0);
	for (i = 0; i < w.extents; i++) {
		data = lseek(fd, (off_t)w.start[i], SEEK_DATA);
		if (data >= 0 && (uint64_t)data < w.start[i] + w.len[i])
			fail_msg("listed extent %u (%llu+%llu) holds data at %lld",
				 i, (unsigned long long)w.start[i],
				 (unsigned long long)w.len[i], (long long)data);
	}
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cancel_in_verify),
		cmocka_unit_test(cancel_from_extent_callback),
		cmocka_unit_test(cancel_in_trim),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
