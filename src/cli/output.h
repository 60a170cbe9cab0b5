/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * output.h - where a target's lines go: straight out, or into its buffer
 */
#ifndef E2TRIM_OUTPUT_H
#define E2TRIM_OUTPUT_H

#include <stdio.h>

struct out_buf;

/* A new, empty buffer; NULL when out of memory. */
struct out_buf *out_buf_new(void);

/* This thread writes into @b from now on (NULL: straight out). */
void out_buf_use(struct out_buf *b);

/* This thread's stdout: its buffer's, or stdout itself. */
FILE *cli_out(void);

/* One whole stderr line (with its '\n'), after what stdout has so far. */
void cli_err_line(const char *line);

/* Everything @b holds, on stdout and stderr, in the order written. */
void out_buf_print(struct out_buf *b);

void out_buf_free(struct out_buf *b);

#endif /* E2TRIM_OUTPUT_H */
