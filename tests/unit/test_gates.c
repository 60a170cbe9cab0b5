// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_gates.c - gates_check_super(), refusal_for() and refuse()
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

#include "e2trim.h"
#include "gates.h"

const char *program_name = "test";

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

/*
 * Run the gates with and without --force; expect @plain and @forced.
 * A refusal names its fix; a forced pass over a state gate warns.
 */
static void expect(const struct ext2_super_block *sb, int plain, int forced)
{
	char msg[1024];
	int rc;

	capture_begin();
	rc = gates_check_super(DEV, sb, 0);
	capture_end(msg, sizeof(msg));
	assert_int_equal(rc, plain);
	if (plain == EXIT_OK) {
		assert_string_equal(msg, "");
	} else {
		assert_non_null(strstr(msg, "test: " DEV ": "));
		assert_non_null(strstr(msg, refusal_for(plain)->fix));
	}

	capture_begin();
	rc = gates_check_super(DEV, sb, 1);
	capture_end(msg, sizeof(msg));
	assert_int_equal(rc, forced);
	if (plain != EXIT_OK && forced == EXIT_OK) {
		assert_non_null(strstr(msg, "WARNING: "));
		assert_non_null(strstr(msg, refusal_for(plain)->what));
	}
	if (plain == EXIT_OK)
		assert_string_equal(msg, "");
}

static void test_clean_passes(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	expect(&sb, EXIT_OK, EXIT_OK);
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
	expect(&sb, EXIT_OK, EXIT_OK);
}

static void test_not_valid(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_state = 0;
	expect(&sb, EXIT_NOT_CLEAN, EXIT_OK);
}

static void test_error_fs(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_state |= EXT2_ERROR_FS;
	expect(&sb, EXIT_NOT_CLEAN, EXIT_OK);
}

static void test_needs_recovery(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_feature_incompat = EXT3_FEATURE_INCOMPAT_RECOVER;
	expect(&sb, EXIT_JOURNAL, EXIT_OK);
}

static void test_last_orphan(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_last_orphan = 12;
	expect(&sb, EXIT_ORPHANS, EXIT_OK);
}

static void test_orphan_fs(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_state |= EXT3_ORPHAN_FS;
	expect(&sb, EXIT_ORPHANS, EXIT_OK);
}

static void test_orphan_present(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_feature_ro_compat = EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT;
	expect(&sb, EXIT_ORPHANS, EXIT_OK);
}

/* --force never overrides a feature refusal. */
static void test_unknown_incompat(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_feature_incompat = unknown_bit(EXT2_LIB_FEATURE_INCOMPAT_SUPP);
	assert_true(sb.s_feature_incompat != 0);
	expect(&sb, EXIT_FEATURE, EXIT_FEATURE);
}

static void test_unknown_ro_compat(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_feature_ro_compat = unknown_bit(EXT2_LIB_FEATURE_RO_COMPAT_SUPP);
	assert_true(sb.s_feature_ro_compat != 0);
	expect(&sb, EXIT_FEATURE, EXIT_FEATURE);
}

static void test_journal_dev(void **state)
{
	struct ext2_super_block sb;

	(void)state;
	clean_super(&sb);
	sb.s_feature_incompat = EXT3_FEATURE_INCOMPAT_JOURNAL_DEV;
	expect(&sb, EXIT_FEATURE, EXIT_FEATURE);
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
	expect(&sb, EXIT_JOURNAL, EXIT_OK);

	/* journal + orphans + errors */
	sb.s_state = EXT2_VALID_FS | EXT2_ERROR_FS | EXT3_ORPHAN_FS;
	sb.s_last_orphan = 7;
	expect(&sb, EXIT_JOURNAL, EXIT_OK);

	/* orphans + not valid */
	sb.s_feature_incompat = 0;
	sb.s_state = 0;
	expect(&sb, EXIT_ORPHANS, EXIT_OK);

	/* a feature refusal beats every state gate, forced or not */
	sb.s_feature_incompat = EXT3_FEATURE_INCOMPAT_RECOVER |
				EXT3_FEATURE_INCOMPAT_JOURNAL_DEV;
	expect(&sb, EXIT_FEATURE, EXIT_FEATURE);
}

static void test_refusal_table(void **state)
{
	int code;

	(void)state;
	for (code = EXIT_IN_USE; code <= EXIT_UNVERIFIED; code++) {
		const struct refusal *r = refusal_for(code);

		if (!r)
			print_error("no refusal for exit code %d\n", code);
		assert_non_null(r);
		assert_int_equal(r->code, code);
		assert_non_null(r->what);
		assert_non_null(r->fix);
		assert_true(r->what[0] != '\0');
		assert_true(r->fix[0] != '\0');
	}
	assert_null(refusal_for(EXIT_OK));
	assert_null(refusal_for(EXIT_ERROR));
	assert_null(refusal_for(EXIT_UNSUPPORTED));
	assert_null(refusal_for(EXIT_USAGE));
	assert_null(refusal_for(EXIT_INTERRUPTED));
}

/* Run refuse() with stderr captured into @out. */
static int refuse_captured(const char *detail, enum e2trim_exit code,
			   char *out, size_t len)
{
	int rc;

	capture_begin();
	rc = refuse(DEV, code, detail);
	capture_end(out, len);
	return rc;
}

static void test_refuse_message(void **state)
{
	char msg[512], want[512];
	const struct refusal *r = refusal_for(EXIT_JOURNAL);

	(void)state;
	assert_non_null(r);
	assert_int_equal(refuse_captured(NULL, EXIT_JOURNAL, msg, sizeof(msg)),
			 EXIT_JOURNAL);
	snprintf(want, sizeof(want), "test: " DEV ": %s; %s\n", r->what,
		 r->fix);
	assert_string_equal(msg, want);

	assert_int_equal(refuse_captured("s_state 0x2", EXIT_JOURNAL, msg,
					 sizeof(msg)), EXIT_JOURNAL);
	snprintf(want, sizeof(want), "test: " DEV ": %s (s_state 0x2); %s\n",
		 r->what, r->fix);
	assert_string_equal(msg, want);

	/* not a refusal: the code comes back, nothing is printed */
	assert_int_equal(refuse_captured(NULL, EXIT_ERROR, msg, sizeof(msg)),
			 EXIT_ERROR);
	assert_string_equal(msg, "");
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
