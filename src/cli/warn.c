// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * warn.c - the one way the command writes to stderr
 *
 * util-linux's style: "e2trim: <target>: <message>", the program named
 * as it was invoked, no trailing period.  stdout is flushed first, so
 * that a message lands after the lines it follows (in a target's buffer
 * too, see output.c).  A name is bytes: a control byte in it is written
 * as \xHH, as --list writes it, so that no name can break a message's
 * line or send the terminal an escape sequence (retitle it, move the
 * cursor).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "output.h"
#include "progress.h"

const char *text_safe(const char *s, char *buf, size_t len)
{
	const unsigned char *p;
	size_t n = 0;

	if (!len)
		return "";
	for (p = (const unsigned char *)s; *p && n + 1 < len; p++) {
		if (*p >= 0x20 && *p != 0x7f) {
			buf[n++] = (char)*p;
			continue;
		}
		if (n + 5 > len)
			break;
		snprintf(buf + n, len - n, "\\x%02x", *p);
		n += 4;
	}
	buf[n] = '\0';
	return buf;
}

void warnx_target(const char *target, const char *fmt, ...)
{
	char raw[4096], line[4 * sizeof(raw) + 2];
	va_list ap;
	int n;

	progress_clear();
	if (target)
		n = snprintf(raw, sizeof(raw), "%s: %s: ",
			     program_invocation_short_name, target);
	else
		n = snprintf(raw, sizeof(raw), "%s: ",
			     program_invocation_short_name);
	if (n < 0 || (size_t)n >= sizeof(raw) - 1)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(raw + n, sizeof(raw) - n, fmt, ap);
	va_end(ap);
	/* the target's name, and any name in the message, stay one line */
	text_safe(raw, line, sizeof(line) - 1);
	strcat(line, "\n");
	/* a target's own buffer while several run at once (output.c) */
	cli_err_line(line);
}

void warn_code(const char *target, const struct e2trim *t, errcode_t err)
{
	char msg[1024];

	warnx_target(target, "%s", e2trim_message(t, err, msg, sizeof(msg)));
}
