// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * warn.c - the one way the command writes to stderr
 *
 * util-linux's style: "e2trim: <target>: <message>", the program named
 * as it was invoked, no trailing period.  stdout is flushed first, so
 * that a message lands after the lines it follows.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"
#include "progress.h"

void warnx_target(const char *target, const char *fmt, ...)
{
	va_list ap;

	progress_clear();
	fflush(stdout);
	if (target)
		fprintf(stderr, "%s: %s: ", program_invocation_short_name,
			target);
	else
		fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void warn_code(const char *target, const struct e2trim *t, errcode_t err)
{
	char msg[1024];

	warnx_target(target, "%s", e2trim_message(t, err, msg, sizeof(msg)));
}
