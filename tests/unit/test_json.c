// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_json.c - the --json writer: nesting, commas, escaping
 *
 *  - a document of nested objects and arrays comes out exactly, commas
 *    between members and none after the last, empty ones as {} and [];
 *  - strings escape the quote, the backslash and every control
 *    character, and pass well-formed UTF-8 as it is;
 *  - each byte of ill-formed UTF-8 (a lone continuation byte, an
 *    overlong form, a surrogate, past U+10FFFF, a sequence cut short)
 *    becomes \ufffd, and json_string() adds "<key>_raw" with the bytes
 *    in hex.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json.h"

static void test_document(void **state)
{
	struct json j;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	json_begin(&j, f);
	json_int(&j, "version", 1);
	json_open_array(&j, "targets");
	json_open(&j, NULL);
	json_string(&j, "target", "a.img");
	json_null(&j, "partition");
	json_u64(&j, "big", UINT64_MAX);
	json_open(&j, "empty");
	json_close(&j);
	json_bool(&j, "ok", 1);
	json_seconds(&j, "seconds", 0.25);
	json_close(&j);
	json_close(&j);
	json_open_array(&j, "none");
	json_close(&j);
	json_int(&j, "exit_code", -1);
	json_end(&j);
	fclose(f);
	assert_string_equal(text,
		"{\n"
		"  \"version\": 1,\n"
		"  \"targets\": [\n"
		"    {\n"
		"      \"target\": \"a.img\",\n"
		"      \"partition\": null,\n"
		"      \"big\": 18446744073709551615,\n"
		"      \"empty\": {},\n"
		"      \"ok\": true,\n"
		"      \"seconds\": 0.250000\n"
		"    }\n"
		"  ],\n"
		"  \"none\": [],\n"
		"  \"exit_code\": -1\n"
		"}\n");
	free(text);
}

static void test_escaping(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	json_quote(f, "a \"q\" \\ b\n\t\r\001\037\177 \xc3\xa9");
	fclose(f);
	assert_string_equal(text, "\"a \\\"q\\\" \\\\ b\\n\\t\\r\\u0001\\u001f"
			    "\\u007f \xc3\xa9\"");
	free(text);
}

static char *quoted(const char *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	json_quote(f, s);
	fclose(f);
	return text;
}

static void test_utf8(void **state)
{
	static const struct {
		const char *in, *out;
		int valid;
	} cases[] = {
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		  "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", 1 },
		{ "a\xff" "b", "\"a\\ufffdb\"", 0 },
		{ "\x80", "\"\\ufffd\"", 0 },			/* lone continuation */
		{ "\xc0\xaf", "\"\\ufffd\\ufffd\"", 0 },	/* overlong '/' */
		{ "\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"", 0 },
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"", 0 },	/* surrogate */
		{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", 0 },
		{ "\xe2\x82", "\"\\ufffd\\ufffd\"", 0 },		/* cut short */
		{ "\xed\x9f\xbf\xf4\x8f\xbf\xbf",
		  "\"\xed\x9f\xbf\xf4\x8f\xbf\xbf\"", 1 },	/* the edges */
	};
	unsigned int i;
	char *text;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		text = quoted(cases[i].in);
		assert_string_equal(text, cases[i].out);
		assert_int_equal(json_utf8_valid(cases[i].in), cases[i].valid);
		free(text);
	}
}

static void test_raw_member(void **state)
{
	struct json j;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	json_begin(&j, f);
	json_string(&j, "target", "a\xff.img");
	json_string(&j, "label", "ok");
	json_end(&j);
	fclose(f);
	assert_string_equal(text,
		"{\n"
		"  \"target\": \"a\\ufffd.img\",\n"
		"  \"target_raw\": \"61ff2e696d67\",\n"
		"  \"label\": \"ok\"\n"
		"}\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_document),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_raw_member),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
