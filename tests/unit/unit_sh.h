/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unit_sh.h - the unit suites that need a real filesystem make it with
 * mke2fs and debugfs through sh(); include after <cmocka.h>
 */
#ifndef E2TRIM_UNIT_SH_H
#define E2TRIM_UNIT_SH_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Run the shell command printf(@fmt, ...) makes; its failure fails the test. */
static void __attribute__((format(printf, 1, 2))) sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

#endif /* E2TRIM_UNIT_SH_H */
