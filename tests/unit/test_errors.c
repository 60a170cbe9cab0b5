// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_errors.c - the error table and its one map to exit codes
 *
 *  - every code of e2trim_err.et has its exit code in errors.c's table;
 *  - every message reads "<what>; <fix>", both parts there;
 *  - a refusal's exit code is one of the refusals' (10 and up);
 *  - e2trim_message() puts particulars in parentheses, or lets them
 *    lead for the codes whose particulars say it better;
 *  - codes that are not e2trim's (libext2fs's, errno) exit 1;
 *  - e2trim_error_desc() and e2trim_error_fix() give the two halves apart,
 *    the command's fix being the .et's, the caller's naming no option.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "e2trim.h"
#include "e2trim_int.h"

static void test_every_code_mapped(void **state)
{
	long i;

	(void)state;
	assert_true(et_e2tr_error_table.n_msgs > 30);
	for (i = 0; i < et_e2tr_error_table.n_msgs; i++) {
		errcode_t code = ERROR_TABLE_BASE_e2tr + i;
		const char *text = et_e2tr_error_table.msgs[i];
		const char *fix = strstr(text, "; ");

		if (!errors_known(code))
			print_error("code %ld (%s) has no exit code\n", i, text);
		assert_true(errors_known(code));
		if (!fix || fix == text || !fix[2])
			print_error("code %ld: \"%s\" is not \"what; fix\"\n",
				    i, text);
		assert_non_null(fix);
		assert_true(fix > text && fix[2] != '\0');
		assert_int_not_equal(e2trim_exit_code(code), E2TRIM_EXIT_OK);
	}
}

static void test_exit_codes(void **state)
{
	(void)state;
	assert_int_equal(e2trim_exit_code(0), 0);
	assert_int_equal(e2trim_exit_code(E2TRIM_ERR_MOUNTED), 10);
	assert_int_equal(e2trim_exit_code(E2TRIM_ERR_LOOP_BUSY), 10);
	assert_int_equal(e2trim_exit_code(E2TRIM_ERR_NOT_EXT), 11);
	assert_int_equal(e2trim_exit_code(E2TRIM_ERR_UNVERIFIED), 19);
	assert_int_equal(e2trim_exit_code(E2TRIM_ERR_INTERRUPTED), 130);
	assert_int_equal(e2trim_exit_code(E2TRIM_ERR_RANGE_OUTSIDE), 3);
	assert_int_equal(e2trim_exit_code(E2TRIM_ERR_DISCARD_UNSUPPORTED), 2);
	assert_int_equal(e2trim_exit_code(EXT2_ET_SHORT_READ), 1);
	assert_int_equal(e2trim_exit_code(EIO), 1);
}

static void test_message(void **state)
{
	struct e2trim *t;
	char msg[512];

	(void)state;
	assert_int_equal(e2trim_new(&t), 0);
	/* no particulars: the table's words */
	e2trim_message(t, E2TRIM_ERR_MOUNTED, msg, sizeof(msg));
	assert_string_equal(msg, et_e2tr_error_table.msgs[
		E2TRIM_ERR_MOUNTED - ERROR_TABLE_BASE_e2tr]);
	/* particulars in parentheses, before the fix */
	lib_fail(t, E2TRIM_ERR_MOUNTED, "mounted on %s", "/mnt");
	e2trim_message(t, E2TRIM_ERR_MOUNTED, msg, sizeof(msg));
	assert_string_equal(msg, "is mounted or in use (mounted on /mnt); "
			    "unmount it first; for a mounted filesystem use "
			    "fstrim");
	/* particulars that lead */
	lib_fail(t, E2TRIM_ERR_NO_PARTITION, "no partition %u (the table has "
		 "%d)", 3, 2);
	e2trim_message(t, E2TRIM_ERR_NO_PARTITION, msg, sizeof(msg));
	assert_non_null(strstr(msg, "no partition 3 (the table has 2); "));
	/* a cause from errno */
	lib_fail_cause(t, E2TRIM_ERR_OPEN, ENOENT, "cannot open");
	assert_string_equal(e2trim_detail(t),
			    "cannot open: No such file or directory");
	/* not ours: the registered table's text */
	lib_fail(t, 0, NULL);
	e2trim_message(t, EXT2_ET_BAD_MAGIC, msg, sizeof(msg));
	assert_string_equal(msg, error_message(EXT2_ET_BAD_MAGIC));
	e2trim_free(t);
}

/*
 * A name in the particulars is bytes: a newline or a terminal's escape
 * sequence in it comes out as \xHH (as --list writes names), so the
 * message stays one line and cannot retitle the caller's terminal; the
 * same in the warnings and in what --force let pass.  A detail too long
 * for its buffer is cut between two escapes, never inside one.
 */
static void test_message_control_bytes(void **state)
{
	static const char name[] = "a\033]0;title\007\nb\x7f.img";
	struct e2trim *t;
	char msg[512], longer[700];
	const char *d;
	size_t i;

	(void)state;
	assert_int_equal(e2trim_new(&t), 0);
	lib_fail(t, E2TRIM_ERR_MOUNTED, "mounted on %s", name);
	assert_string_equal(e2trim_detail(t), "mounted on a\\x1b]0;title"
			    "\\x07\\x0ab\\x7f.img");
	e2trim_message(t, E2TRIM_ERR_MOUNTED, msg, sizeof(msg));
	for (i = 0; msg[i]; i++)
		assert_true((unsigned char)msg[i] >= 0x20 &&
			    (unsigned char)msg[i] != 0x7f);
	assert_non_null(strstr(msg, "a\\x1b]0;title\\x07\\x0ab\\x7f.img"));
	lib_warn(t, "%s", name);
	assert_string_equal(e2trim_warning(t, 0),
			    "a\\x1b]0;title\\x07\\x0ab\\x7f.img");
	lib_forced(t, E2TRIM_ERR_NOT_CLEAN, "%s", name);
	e2trim_forced(t, 0, &d);
	assert_string_equal(d, "a\\x1b]0;title\\x07\\x0ab\\x7f.img");
	/* cut to the buffer, a whole escape or none */
	memset(longer, '\n', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	lib_fail(t, E2TRIM_ERR_MOUNTED, "x%s", longer);
	d = e2trim_detail(t);
	assert_true(strlen(d) < DETAIL_LEN);
	assert_int_equal((strlen(d) - 1) % 4, 0);
	assert_string_equal(d + strlen(d) - 4, "\\x0a");
	e2trim_free(t);
}

/* Does @fix speak to e2trim's command line ("--offset", "-p N")? */
static int names_option(const char *fix)
{
	static const char *const cli[] = {
		"--offset", "--length", "--partition", "--zeroout", "--secure",
		"--zero-fill", "--help", "--targets-from", "--force", "--fsck",
		" -p ", "run e2trim again",
	};
	size_t i;

	for (i = 0; i < sizeof(cli) / sizeof(cli[0]); i++)
		if (strstr(fix, cli[i]))
			return 1;
	return 0;
}

static void test_desc_and_fix(void **state)
{
	char desc[512], joined[1024];
	long i;

	(void)state;
	for (i = 0; i < et_e2tr_error_table.n_msgs; i++) {
		errcode_t code = ERROR_TABLE_BASE_e2tr + i;
		const char *cmd = e2trim_error_fix(code, E2TRIM_FIX_COMMAND);
		const char *caller = e2trim_error_fix(code, E2TRIM_FIX_CALLER);

		/* the two halves, joined, are the .et's message */
		e2trim_error_desc(code, desc, sizeof(desc));
		snprintf(joined, sizeof(joined), "%s; %s", desc, cmd);
		assert_string_equal(joined, et_e2tr_error_table.msgs[i]);
		assert_true(*desc && *caller);
		/* the --fsck and target-list codes are the command's alone */
		if (code == E2TRIM_ERR_FSCK_REBOOT ||
		    code == E2TRIM_ERR_FSCK_FAILED ||
		    code == E2TRIM_ERR_DUPLICATE ||
		    code == E2TRIM_ERR_TARGETS_FILE)
			continue;
		if (names_option(caller))
			print_error("code %ld: the caller's fix \"%s\" speaks "
				    "to the command line\n", i, caller);
		assert_false(names_option(caller));
	}
	assert_string_equal(e2trim_error_fix(E2TRIM_ERR_RANGE_OUTSIDE,
					     E2TRIM_FIX_COMMAND),
			    "give an --offset below the filesystem's size");
	assert_non_null(strstr(e2trim_error_fix(E2TRIM_ERR_RANGE_OUTSIDE,
						E2TRIM_FIX_CALLER),
			       "e2trim_set_range()"));
	/* not ours: error_message()'s text, no fix */
	assert_string_equal(e2trim_error_desc(EXT2_ET_BAD_MAGIC, desc,
					      sizeof(desc)),
			    error_message(EXT2_ET_BAD_MAGIC));
	assert_string_equal(e2trim_error_fix(EXT2_ET_BAD_MAGIC,
					     E2TRIM_FIX_CALLER), "");
	assert_string_equal(e2trim_error_desc(E2TRIM_ERR_OPEN, NULL, 4), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_code_mapped),
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_message),
		cmocka_unit_test(test_message_control_bytes),
		cmocka_unit_test(test_desc_and_fix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
