// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_gates.c - gates_check_super(), and how a refusal is worded
 *
 * The gates are the library's: they return a code and print nothing,
 * forced or not.  e2trim_message() words the code: "<what> (<detail>);
 * <fix>", the fix from the error table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ext2fs/ext2fs.h>

#include "compat.h"
#include "e2trim.h"
#include "e2trim_int.h"
#include "gates.h"

#define DEV "/dev/test"

/* A superblock that passes every gate: cleanly unmounted, nothing else. */
static void clean_super(struct ext2_super_block *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->s_state = EXT2_VALID_FS;
}

/* The highest bit of a feature word that libext2fs does not know. */
static uint32_t unknown_bit(uint32_t supported)
{
	uint32_t bit;

	for (bit = 1U << 31; bit; bit >>= 1)
		if (!(supported & bit))
			return bit;
	return 0;
}

static int saved_stderr = -1;
static FILE *capture;

/* Send stderr to a temporary file until capture_end(). */
static void capture_begin(void)
{
	capture = tmpfile();
	assert_non_null(capture);
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	assert_true(saved_stderr >= 0);
	assert_true(dup2(fileno(capture), STDERR_FILENO) >= 0);
}

/* Put stderr back and copy what was written to it into @out. */
static void capture_end(char *out, size_t len)
{
	size_t n;

	fflush(stderr);
	assert_true(dup2(saved_stderr, STDERR_FILENO) >= 0);
	close(saved_stderr);
	rewind(capture);
	n = fread(out, 1, len - 1, capture);
	out[n] = '\0';
	fclose(capture);
}

/* What the error table says about @code: "<what>; <fix>". */
static const char *table_text(errcode_t code)
{
	return et_e2tr_error_table.msgs[code - ERROR_TABLE_BASE_e2tr];
}

/*
 * Run the gates with and without --force; expect @plain and @forced.
 * Nothing is printed either way; a refusal's message names its fix; a
 * forced pass over a state gate is recorded, to be warned about.
 */
static void expect(const struct ext2_super_block *sb, errcode_t plain,
		   errcode_t forced)
{
	errcode_t got[4];
	unsigned int n = 0;
	char msg[1024];
	errcode_t rc;

	capture_begin();
	rc = gates_check_super(sb, 0, got, 4, &n);
	capture_end(msg, sizeof(msg));
	assert_int_equal(rc, plain);
	assert_string_equal(msg, "");
	assert_int_equal(n, 0);
	if (plain) {
		assert_non_null(strstr(table_text(plain), "; "));
		assert_int_not_equal(e2trim_exit_code(plain), E2TRIM_EXIT_ERROR);
	}

	capture_begin();
	rc = gates_check_super(sb, 1, got, 4, &n);
	capture_end(msg, sizeof(msg));
	assert_int_equal(rc, forced);
	assert_string_equal(msg, "");
	if (plain && !forced) {
		assert_true(n >= 1);
		assert_int_equal(got[0], plain);
	}
	if (!plain)
		assert_int_equal(n, 0);
}

static void test_clean_passes(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	expect(&sb, 0, 0);
}

/* Every feature libext2fs knows passes, but for the three with gates. */
static void test_known_features_pass(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_feature_compat = 0xffffffff;
	sb.s_feature_incompat = EXT2_LIB_FEATURE_INCOMPAT_SUPP &
				~(EXT3_FEATURE_INCOMPAT_RECOVER |
				  EXT3_FEATURE_INCOMPAT_JOURNAL_DEV);
	sb.s_feature_ro_compat = EXT2_LIB_FEATURE_RO_COMPAT_SUPP &
				 ~EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT;
	expect(&sb, 0, 0);
}

static void test_not_valid(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_state = 0;
	expect(&sb, E2TRIM_ERR_NOT_CLEAN, 0);
}

static void test_error_fs(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_state |= EXT2_ERROR_FS;
	expect(&sb, E2TRIM_ERR_NOT_CLEAN, 0);
}

static void test_needs_recovery(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_feature_incompat = EXT3_FEATURE_INCOMPAT_RECOVER;
	expect(&sb, E2TRIM_ERR_JOURNAL, 0);
}

static void test_last_orphan(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_last_orphan = 12;
	expect(&sb, E2TRIM_ERR_ORPHANS, 0);
}

static void test_orphan_fs(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_state |= EXT3_ORPHAN_FS;
	expect(&sb, E2TRIM_ERR_ORPHANS, 0);
}

static void test_orphan_present(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_feature_ro_compat = EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT;
	/*
	 * built against a libext2fs older than 1.47 (src/compat.h), the
	 * feature is one the library cannot read: refused as unknown (12)
	 */
	if (EXT2_LIB_FEATURE_RO_COMPAT_SUPP &
	    EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT)
		expect(&sb, E2TRIM_ERR_ORPHANS, 0);
	else
		expect(&sb, E2TRIM_ERR_FEATURE, E2TRIM_ERR_FEATURE);
}

/* --force never overrides a feature refusal. */
static void test_unknown_incompat(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_feature_incompat = unknown_bit(EXT2_LIB_FEATURE_INCOMPAT_SUPP);
	assert_true(sb.s_feature_incompat != 0);
	expect(&sb, E2TRIM_ERR_FEATURE, E2TRIM_ERR_FEATURE);
}

static void test_unknown_ro_compat(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_feature_ro_compat = unknown_bit(EXT2_LIB_FEATURE_RO_COMPAT_SUPP);
	assert_true(sb.s_feature_ro_compat != 0);
	expect(&sb, E2TRIM_ERR_FEATURE, E2TRIM_ERR_FEATURE);
}

static void test_journal_dev(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_feature_incompat = EXT3_FEATURE_INCOMPAT_JOURNAL_DEV;
	expect(&sb, E2TRIM_ERR_FEATURE, E2TRIM_ERR_FEATURE);
}

/* With several failures the most specific one wins. */
static void test_order(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	/* journal + not valid: replay first */
	clean_super(&sb);
	sb.s_state = 0;
	sb.s_feature_incompat = EXT3_FEATURE_INCOMPAT_RECOVER;
	expect(&sb, E2TRIM_ERR_JOURNAL, 0);

	/* journal + orphans + errors */
	sb.s_state = EXT2_VALID_FS | EXT2_ERROR_FS | EXT3_ORPHAN_FS;
	sb.s_last_orphan = 7;
	expect(&sb, E2TRIM_ERR_JOURNAL, 0);

	/* orphans + not valid */
	sb.s_feature_incompat = 0;
	sb.s_state = 0;
	expect(&sb, E2TRIM_ERR_ORPHANS, 0);

	/* a feature refusal beats every state gate, forced or not */
	sb.s_feature_incompat = EXT3_FEATURE_INCOMPAT_RECOVER |
				EXT3_FEATURE_INCOMPAT_JOURNAL_DEV;
	expect(&sb, E2TRIM_ERR_FEATURE, E2TRIM_ERR_FEATURE);
}

/* Every refusal has a fix, and an exit code of its own kind. */
static void test_refusal_table(void **state)
{
	static const struct {
		errcode_t code;
		int exit;
	} gates[] = {
		{ E2TRIM_ERR_FEATURE, E2TRIM_EXIT_FEATURE },
		{ E2TRIM_ERR_JOURNAL, E2TRIM_EXIT_JOURNAL },
		{ E2TRIM_ERR_ORPHANS, E2TRIM_EXIT_ORPHANS },
		{ E2TRIM_ERR_NOT_CLEAN, E2TRIM_EXIT_NOT_CLEAN },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(gates) / sizeof(gates[0]); i++) {
		const char *text = table_text(gates[i].code);
		const char *fix = strstr(text, "; ");

		assert_int_equal(e2trim_exit_code(gates[i].code), gates[i].exit);
		assert_non_null(fix);
		assert_true(fix > text);
		assert_true(fix[2] != '\0');
	}
	assert_int_equal(e2trim_exit_code(0), E2TRIM_EXIT_OK);
	assert_int_equal(e2trim_exit_code(EXT2_ET_SHORT_READ), E2TRIM_EXIT_ERROR);
}

/* e2trim_message(): "<what>; <fix>", the particulars in parentheses. */
static void test_refuse_message(void **state)
{
	struct e2trim *t;
	char msg[512], want[512];
	const char *text = table_text(E2TRIM_ERR_JOURNAL);
	const char *fix = strstr(text, "; ");

	(void)state;
	assert_int_equal(e2trim_new(&t), 0);
	e2trim_message(t, E2TRIM_ERR_JOURNAL, msg, sizeof(msg));
	assert_string_equal(msg, text);

	assert_int_equal(lib_fail(t, E2TRIM_ERR_JOURNAL, "s_state 0x%x", 2),
			 E2TRIM_ERR_JOURNAL);
	assert_string_equal(e2trim_detail(t), "s_state 0x2");
	snprintf(want, sizeof(want), "%.*s (s_state 0x2)%s",
		 (int)(fix - text), text, fix);
	e2trim_message(t, E2TRIM_ERR_JOURNAL, msg, sizeof(msg));
	assert_string_equal(msg, want);
	e2trim_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_passes),
		cmocka_unit_test(test_known_features_pass),
		cmocka_unit_test(test_not_valid),
		cmocka_unit_test(test_error_fs),
		cmocka_unit_test(test_needs_recovery),
		cmocka_unit_test(test_last_orphan),
		cmocka_unit_test(test_orphan_fs),
		cmocka_unit_test(test_orphan_present),
		cmocka_unit_test(test_unknown_incompat),
		cmocka_unit_test(test_unknown_ro_compat),
		cmocka_unit_test(test_journal_dev),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_refusal_table),
		cmocka_unit_test(test_refuse_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
