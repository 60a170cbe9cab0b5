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
 *    in hex;
 *  - the document json_document() writes for a trimmed target carries
 *    each result and request field from its own source (every value
 *    distinct, so one field printed in another's place is seen).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json.h"
#include "jobs.h"
#include "job_list.h"

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

/* The whole document json_document() writes to stdout, as a string. */
static char *document_of(const struct cli_control *ctl,
			 const struct job_list *l)
{
	char *text;
	FILE *f = tmpfile();
	long n;
	int saved = dup(STDOUT_FILENO);

	assert_non_null(f);
	assert_true(saved >= 0);
	fflush(stdout);
	assert_true(dup2(fileno(f), STDOUT_FILENO) >= 0);
	json_document(ctl, l, 0);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	n = lseek(fileno(f), 0, SEEK_END);
	assert_true(n > 0);
	text = calloc(1, (size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(pread(fileno(f), text, (size_t)n, 0), n);
	fclose(f);
	return text;
}

/* "key": value, with the indent of a member of target's objects */
static void has_member(const char *doc, const char *member)
{
	if (!strstr(doc, member))
		fail_msg("no %s in:\n%s", member, doc);
}

static void test_result_fields(void **state)
{
	struct cli_control ctl;
	struct job_list l = { 0 };
	struct job *r;
	struct e2trim_result *res;
	char *doc;

	(void)state;
	memset(&ctl, 0, sizeof(ctl));
	ctl.range.start_bytes = 4194304;
	ctl.range.len_bytes = UINT64_MAX;
	ctl.range.minlen_bytes = 65536;
	r = job_add(&l, "a.img");
	assert_non_null(r);
	r->out.opened = 1;
	r->out.applied = 1;
	res = &r->out.res;
	snprintf(res->fs_type, sizeof(res->fs_type), "ext4");
	snprintf(res->uuid, sizeof(res->uuid),
		 "5b3c4e0a-6f1d-4f0e-9a51-3c2d7e8f9a10");
	snprintf(res->label, sizeof(res->label), "data");
	res->block_size = 4096;
	res->cluster_size = 65536;
	res->blocks = 262144;
	res->free_blocks = 200000;
	res->extents = 7;
	res->requests = 11;
	res->bytes_trimmed = 123 * 4096;
	res->bytes_below_minimum = 3 * 4096;
	res->bytes_kept_for_alignment = 5 * 512;
	res->bytes_already_sparse = 13 * 4096;
	doc = document_of(&ctl, &l);
	has_member(doc, "\"label\": \"data\",\n");
	has_member(doc, "\"uuid\": \"5b3c4e0a-6f1d-4f0e-9a51-3c2d7e8f9a10\",\n");
	has_member(doc, "\"block_size\": 4096,\n");
	has_member(doc, "\"cluster_size\": 65536,\n");
	has_member(doc, "\"offset\": 4194304,\n");
	has_member(doc, "\"minimum\": 65536,\n");
	has_member(doc, "\"extents\": 7,\n");
	has_member(doc, "\"requests\": 11,\n");
	has_member(doc, "\"bytes_trimmed\": 503808,\n");
	has_member(doc, "\"bytes_below_minimum\": 12288,\n");
	has_member(doc, "\"bytes_kept_for_alignment\": 2560,\n");
	has_member(doc, "\"bytes_already_sparse\": 53248,\n");
	free(doc);
	jobs_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_document),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_raw_member),
		cmocka_unit_test(test_result_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
