// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_json.c - the --json writer: nesting, commas, escaping
 *
 *  - a document of nested objects and arrays comes out exactly, commas
 *    between members and none after the last, empty ones as {} and [];
 *  - strings escape the quote, the backslash and every control
 *    character, and pass bytes above 0x7f as they are.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_document),
		cmocka_unit_test(test_escaping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
