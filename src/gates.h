/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gates.h - the refusals: every reason e2trim will not trim, with its fix
 */
#ifndef E2TRIM_GATES_H
#define E2TRIM_GATES_H

#include <ext2fs/ext2_fs.h>

#include "e2trim.h"

struct refusal {
	enum e2trim_exit code;
	const char *what;	/* what is wrong, after "<device>: " */
	const char *fix;	/* what the person should do next */
};

/* The table entry for @code, or NULL if @code is not a refusal. */
const struct refusal *refusal_for(enum e2trim_exit code);

/*
 * Print "e2trim: <device>: <what> (<detail>); <fix>" and return @code.
 * @detail may be NULL.
 */
int refuse(const char *device, enum e2trim_exit code, const char *detail);

/*
 * Check the superblock alone: features, journal, orphans, clean state.
 * With @force the state gates only warn.  Returns EXIT_OK or the refusal.
 */
int gates_check_super(const char *device, const struct ext2_super_block *sb,
		      int force);

#endif /* E2TRIM_GATES_H */
