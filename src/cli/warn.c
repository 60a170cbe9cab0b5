// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * warn.c - the one way the command writes to stderr
 *
 * util-linux's style: "e2trim: <target>: <message>", the program named
 * as it was invoked, no trailing period.  stdout is flushed first, so
 * that a message lands after the lines it follows (in a target's buffer
 * too, see output.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "output.h"
#include "progress.h"

void warnx_target(const char *target, const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	int n;

	progress_clear();
	if (target)
		n = snprintf(line, sizeof(line), "%s: %s: ",
			     program_invocation_short_name, target);
	else
		n = snprintf(line, sizeof(line), "%s: ",
			     program_invocation_short_name);
	if (n < 0 || (size_t)n >= sizeof(line) - 2)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	/* a target's own buffer while several run at once (output.c) */
	cli_err_line(line);
}

void warn_code(const char *target, const struct e2trim *t, errcode_t err)
{
	char msg[1024];

	warnx_target(target, "%s", e2trim_message(t, err, msg, sizeof(msg)));
}
