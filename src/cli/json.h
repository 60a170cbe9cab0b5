/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json.h - a small JSON writer, and e2trim's --json document
 */
#ifndef E2TRIM_JSON_H
#define E2TRIM_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	unsigned int depth;
	unsigned char written[JSON_MAX_DEPTH];	/* a member at this depth */
	char closer[JSON_MAX_DEPTH];		/* '}' or ']' */
};

/*
 * Each call writes one member: "key": value inside an object, the bare
 * value inside an array (@key NULL).  json_open() and json_open_array()
 * start a nested object or array, json_close() ends the innermost.
 */
void json_begin(struct json *j, FILE *f);	/* the document's { */
void json_end(struct json *j);			/* its }, and a newline */
void json_open(struct json *j, const char *key);
void json_open_array(struct json *j, const char *key);
void json_close(struct json *j);
void json_string(struct json *j, const char *key, const char *val); /* NULL: null */
void json_u64(struct json *j, const char *key, uint64_t val);
void json_int(struct json *j, const char *key, long long val);
void json_seconds(struct json *j, const char *key, double val);
void json_bool(struct json *j, const char *key, int val);
void json_null(struct json *j, const char *key);

/*
 * The string @s as JSON spells it, quotes included: valid UTF-8 always,
 * each byte of an ill-formed sequence as U+FFFD.
 */
void json_quote(FILE *f, const char *s);

/* @s is well-formed UTF-8 (else json_string() adds "<key>_raw", hex). */
int json_utf8_valid(const char *s);

#endif /* E2TRIM_JSON_H */
