/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsck.h - --fsck: e2fsck repairs the filesystem before it is trimmed
 */
#ifndef E2TRIM_FSCK_H
#define E2TRIM_FSCK_H

#include <stddef.h>

#include "cli.h"

/* e2fsck(8)'s exit status: a sum of these bits. */
enum {
	FSCK_NONDESTRUCT = 1,	/* errors corrected */
	FSCK_REBOOT = 2,	/* errors corrected, system should be rebooted */
	FSCK_UNCORRECTED = 4,	/* errors left uncorrected */
	FSCK_ERROR = 8,		/* operational error */
	FSCK_USAGE = 16,	/* usage or syntax error */
	FSCK_CANCELED = 32,	/* cancelled by user request */
	FSCK_LIBRARY = 128,	/* shared library error */
};

/*
 * Not e2fsck's: the exit status of a spawned child whose exec failed, as
 * shells and fork-based spawns give it: 126 found but not executable, 127
 * not found.  e2fsck's own codes are sums of the bits above, and 64 is
 * not one of them, so neither can come from e2fsck.
 */
#define FSCK_EXEC_NOEXEC 126
#define FSCK_EXEC_FAILED 127

/*
 * What e2fsck's exit status @code means for the trim: 0 (0 or 1, go on),
 * E2TRIM_ERR_FSCK_REBOOT (2 or 3) or E2TRIM_ERR_FSCK_FAILED (4 and above).
 */
errcode_t fsck_verdict(int code);

/* @code in words, "errors left uncorrected, operational error"; @buf. */
const char *fsck_describe(int code, char *buf, size_t len);

/*
 * The command line for @prog: "@prog [-f] -p|-n @target", @target being
 * the device, or what fsck_run() made for a partition or a VM image.  @argv has room for
 * FSCK_ARGV_MAX pointers, the last one NULL.
 */
#define FSCK_ARGV_MAX 5
void fsck_argv(const struct cli_control *ctl, const char *prog,
	       const char *target, const char *argv[FSCK_ARGV_MAX]);

/*
 * Run e2fsck ($E2FSCK, or the e2fsck on PATH) on ctl->path and wait for
 * it; its output goes to e2trim's standard error.  A filesystem that does
 * not start at the first byte (-p N, ?offset=) gets a loop device bounded
 * by the table entry (fsck_loop.c; "path?offset=N" where no loop device
 * can be made), a VM image its content through nbdfuse (fsck_vm.c); both
 * are released before this returns, whatever happened.  A device in use is refused first (through
 * @t, e2trim_probe()), and e2fsck does not run.  Returns 0 when the
 * filesystem may be opened now (e2fsck exited 0 or 1), or the error code
 * after saying why: a refusal of the device itself,
 * E2TRIM_ERR_FSCK_REBOOT, E2TRIM_ERR_FSCK_FAILED, E2TRIM_ERR_FSCK_EXEC.
 * Nothing e2fsck did is trusted beyond that: every gate runs again on
 * open.
 */
errcode_t fsck_run(const struct cli_control *ctl, struct e2trim *t);

#endif /* E2TRIM_FSCK_H */
