// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * output.c - where a target's lines go: straight out, or into its buffer
 *
 * With -j, several targets run at once, each in its own thread, and yet
 * their output must come in the order given, one target's after the
 * other's, never interleaved.  So a worker thread writes into a buffer
 * of its own (open_memstream), and the main thread prints the buffers in
 * order.  Within a buffer, a message for stderr remembers how far stdout
 * had got, so that the two streams interleave as they would have.
 * Without a buffer (one target at a time) everything goes straight out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

/* one stderr line, and how much of the stdout text came before it */
struct err_chunk {
	size_t out_before;
	char *line;
};

struct out_buf {
	FILE *out;		/* memstream over text/len */
	char *text;
	size_t len;
	struct err_chunk *errs;
	size_t nerrs, cap;
	int failed;		/* out of memory: some text was lost */
};

static __thread struct out_buf *current;

struct out_buf *out_buf_new(void)
{
	struct out_buf *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->out = open_memstream(&b->text, &b->len);
	if (!b->out) {
		free(b);
		return NULL;
	}
	return b;
}

void out_buf_use(struct out_buf *b)
{
	current = b;
}

FILE *cli_out(void)
{
	return current ? current->out : stdout;
}

void cli_err_line(const char *line)
{
	struct out_buf *b = current;
	struct err_chunk *n;

	if (!b) {
		fflush(stdout);
		fputs(line, stderr);
		return;
	}
	fflush(b->out);
	if (b->nerrs == b->cap) {
		n = realloc(b->errs, (b->cap * 2 + 4) * sizeof(*n));
		if (!n) {
			b->failed = 1;
			return;
		}
		b->errs = n;
		b->cap = b->cap * 2 + 4;
	}
	b->errs[b->nerrs].out_before = b->len;
	b->errs[b->nerrs].line = strdup(line);
	if (!b->errs[b->nerrs].line) {
		b->failed = 1;
		return;
	}
	b->nerrs++;
}

void out_buf_print(struct out_buf *b)
{
	size_t i, done = 0;

	fflush(b->out);
	for (i = 0; i < b->nerrs; i++) {
		fwrite(b->text + done, 1, b->errs[i].out_before - done, stdout);
		done = b->errs[i].out_before;
		fflush(stdout);
		fputs(b->errs[i].line, stderr);
	}
	fwrite(b->text + done, 1, b->len - done, stdout);
	if (b->failed)
		fputs("e2trim: out of memory: some messages were lost\n",
		      stderr);
}

void out_buf_free(struct out_buf *b)
{
	size_t i;

	if (!b)
		return;
	fclose(b->out);
	free(b->text);
	for (i = 0; i < b->nerrs; i++)
		free(b->errs[i].line);
	free(b->errs);
	free(b);
}
