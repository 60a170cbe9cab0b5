// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_size.c - parse_size() and size_to_human()
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "e2trim.h"
#include "size.h"


#define KiB 1024ULL
#define MiB (KiB * 1024)
#define GiB (MiB * 1024)
#define EiB (GiB * 1024 * 1024 * 1024)

/* Parse @str, expecting success and @want. */
static void parse_ok(const char *str, uint64_t want)
{
	uint64_t got = 0xdeadbeefULL;
	int rc = parse_size(str, &got);

	if (rc != 0 || got != want)
		print_error("parse_size(\"%s\"): rc %d, %llu; want 0, %llu\n",
			    str, rc, (unsigned long long)got,
			    (unsigned long long)want);
	assert_int_equal(rc, 0);
	assert_true(got == want);
}

/* Parse @str, expecting @err and the output left alone. */
static void parse_fails(const char *str, int err)
{
	uint64_t got = 0xdeadbeefULL;
	int rc = parse_size(str, &got);

	if (rc != err)
		print_error("parse_size(\"%s\"): rc %d, want %d\n", str, rc,
			    err);
	assert_int_equal(rc, err);
	assert_true(got == 0xdeadbeefULL);
}

static void human_is(uint64_t bytes, const char *want)
{
	char buf[HUMAN_SIZE_LEN];

	memset(buf, 'x', sizeof(buf));
	assert_ptr_equal(size_to_human(bytes, buf, sizeof(buf)), buf);
	if (strcmp(buf, want))
		print_error("size_to_human(%llu) = \"%s\", want \"%s\"\n",
			    (unsigned long long)bytes, buf, want);
	assert_string_equal(buf, want);
}

static void test_parse_plain(void **state)
{
	(void)state;
	parse_ok("0", 0);
	parse_ok("4096", 4096);
	parse_ok("007", 7);
	parse_ok("18446744073709551615", UINT64_MAX);
}

static void test_parse_binary_suffixes(void **state)
{
	(void)state;
	parse_ok("1K", KiB);
	parse_ok("1k", KiB);
	parse_ok("64KiB", 64 * KiB);
	parse_ok("64kib", 64 * KiB);
	parse_ok("10M", 10 * MiB);
	parse_ok("10MiB", 10 * MiB);
	parse_ok("3G", 3 * GiB);
	parse_ok("2T", 2 * GiB * KiB);
	parse_ok("5P", 5 * GiB * MiB);
	parse_ok("1E", EiB);
	parse_ok("15E", 15 * EiB);
	parse_ok("4 KiB", 4 * KiB);
	parse_ok("12B", 12);
	parse_ok("12 b", 12);
}

static void test_parse_decimal_suffixes(void **state)
{
	(void)state;
	parse_ok("1KB", 1000);
	parse_ok("10MB", 10000000);
	parse_ok("2GB", 2000000000ULL);
	parse_ok("1EB", 1000000000000000000ULL);
	parse_ok("18EB", 18000000000000000000ULL);
}

static void test_parse_fractions(void **state)
{
	(void)state;
	parse_ok("1.5G", 1610612736ULL);
	parse_ok("1.5K", 1536);
	parse_ok("0.5M", 512 * KiB);
	parse_ok("2.25MB", 2250000);
	parse_ok("1.5", 1);		/* no bytes below one */
	/* exact, digit for digit, past where a 64-bit product overflows */
	parse_ok("1.9999999999E", 2305843009098401801ULL);
	parse_ok("1.99999999999999MB", 1999999);
	parse_ok("0.123456789012345678901EB", 123456789012345678ULL);
	parse_ok("15.9999999999999999999E", UINT64_MAX);
	parse_ok("15.99999999999999999999999999999999E", UINT64_MAX);
}

static void test_parse_range(void **state)
{
	(void)state;
	parse_fails("16E", -ERANGE);
	parse_fails("16EiB", -ERANGE);
	parse_fails("19EB", -ERANGE);
	parse_fails("18446744073709551616", -ERANGE);
	/* the fraction is what overflows */
	parse_ok("18.446744073709551615EB", UINT64_MAX);
	parse_ok("18446744073709551615.9", UINT64_MAX);
	parse_fails("18.446744073709551616EB", -ERANGE);
	parse_fails("18.5EB", -ERANGE);
	parse_fails("99999999999999999999999", -ERANGE);
}

static void test_parse_invalid(void **state)
{
	(void)state;
	parse_fails("", -EINVAL);
	parse_fails("abc", -EINVAL);
	parse_fails("-1", -EINVAL);
	parse_fails("+1", -EINVAL);
	parse_fails(" 1", -EINVAL);
	parse_fails("1X", -EINVAL);
	parse_fails("1.", -EINVAL);
	parse_fails(".5", -EINVAL);
	parse_fails("1.5.5", -EINVAL);
	parse_fails("1KX", -EINVAL);
	parse_fails("1KiBB", -EINVAL);
	parse_fails("1  K", -EINVAL);
}

static void test_human_bytes(void **state)
{
	(void)state;
	human_is(0, "0 B");
	human_is(1, "1 B");
	human_is(1023, "1023 B");
}

static void test_human_units(void **state)
{
	(void)state;
	human_is(1024, "1 KiB");
	human_is(1536, "1.5 KiB");
	human_is(4096, "4 KiB");
	human_is(241067008, "229.9 MiB");
	human_is(MiB, "1 MiB");
	human_is(GiB, "1 GiB");
	human_is(GiB * KiB, "1 TiB");
	human_is(GiB * MiB, "1 PiB");
	human_is(EiB, "1 EiB");
	human_is(UINT64_MAX, "16 EiB");
}

/* One decimal, rounded half up on the exact value. */
static void test_human_rounding(void **state)
{
	(void)state;
	human_is(1075, "1 KiB");		/* 1.0498 */
	human_is(1076, "1.1 KiB");		/* 1.0508 */
	human_is(1101004, "1 MiB");		/* 1.0499992 */
	human_is(1101005, "1.1 MiB");		/* 1.0500002 */
	human_is(1048064, "1023.5 KiB");	/* 1023.5 */
	human_is(1048524, "1023.9 KiB");	/* 1023.949 */
	human_is(2047, "2 KiB");		/* 1.999 */
}

/* Rounding up to 1024 of a unit is one of the next unit. */
static void test_human_rounds_into_next_unit(void **state)
{
	(void)state;
	human_is(1048525, "1 MiB");		/* 1023.95 KiB */
	human_is(MiB - 1, "1 MiB");
	human_is(GiB - 1, "1 GiB");
	human_is(EiB - 1, "1 EiB");
	human_is(15 * EiB + EiB / 2, "15.5 EiB");
}

static void test_human_short_buffer(void **state)
{
	char buf[6];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	size_to_human(241067008, buf, sizeof(buf));
	assert_string_equal(buf, "229.9");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_plain),
		cmocka_unit_test(test_parse_binary_suffixes),
		cmocka_unit_test(test_parse_decimal_suffixes),
		cmocka_unit_test(test_parse_fractions),
		cmocka_unit_test(test_parse_range),
		cmocka_unit_test(test_parse_invalid),
		cmocka_unit_test(test_human_bytes),
		cmocka_unit_test(test_human_units),
		cmocka_unit_test(test_human_rounding),
		cmocka_unit_test(test_human_rounds_into_next_unit),
		cmocka_unit_test(test_human_short_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
