// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_fsck.c - what each e2fsck exit status means for the trim, and the
 * e2fsck command line that --fsck, --fsck=force and -n make
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "e2trim.h"
#include "fsck.h"



/* Only 0 and 1 let the trim go on; 2 and 3 want a reboot; the rest fail. */
static void test_verdict_every_status(void **state)
{
	int code;

	(void)state;
	for (code = 0; code < 256; code++) {
		int want = E2TRIM_EXIT_FSCK_FAILED;
		int got = e2trim_exit_code(fsck_verdict(code));

		if (code <= 1)
			want = E2TRIM_EXIT_OK;
		else if (code <= 3)
			want = E2TRIM_EXIT_FSCK_REBOOT;
		if (got != want)
			print_error("e2fsck exit %d: verdict %d, want %d\n",
				    code, got, want);
		assert_int_equal(got, want);
	}
}

static void describes(int code, const char *want)
{
	char buf[128];

	assert_string_equal(fsck_describe(code, buf, sizeof(buf)), want);
}

static void test_describe(void **state)
{
	(void)state;
	describes(0, "clean");
	describes(1, "errors corrected");
	describes(2, "reboot needed");
	describes(3, "errors corrected, reboot needed");
	describes(4, "errors left uncorrected");
	describes(8, "operational error");
	describes(12, "errors left uncorrected, operational error");
	describes(16, "usage error");
	describes(32, "cancelled");
	describes(128, "shared library error");
	describes(64, "unknown status");
	describes(68, "errors left uncorrected, unknown status");
}

/* A short buffer is cut, never overrun, and stays a string. */
static void test_describe_short_buffer(void **state)
{
	char buf[10];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	fsck_describe(255, buf, 8);
	assert_int_equal(strlen(buf), 7);
	assert_int_equal(buf[8], 'x');
}

static void argv_is(enum fsck_mode mode, int dryrun, const char *want)
{
	struct cli_control ctl = { .device = "/dev/sdz9", .fsck = mode,
				      .opts.dryrun = dryrun };
	const char *argv[FSCK_ARGV_MAX];
	char got[128] = "";
	int i;

	fsck_argv(&ctl, "e2fsck", ctl.device, argv);
	for (i = 0; argv[i]; i++) {
		assert_true(i < FSCK_ARGV_MAX - 1);
		if (i)
			strcat(got, " ");
		strcat(got, argv[i]);
	}
	assert_string_equal(got, want);
}

static void test_argv(void **state)
{
	(void)state;
	argv_is(FSCK_PREEN, 0, "e2fsck -p /dev/sdz9");
	argv_is(FSCK_FORCE, 0, "e2fsck -f -p /dev/sdz9");
	argv_is(FSCK_PREEN, 1, "e2fsck -n /dev/sdz9");
	argv_is(FSCK_FORCE, 1, "e2fsck -f -n /dev/sdz9");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict_every_status),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_describe_short_buffer),
		cmocka_unit_test(test_argv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
