// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lib_opts.c - the command line's options into the library's setters
 *
 * The library takes no struct from its callers (e2trim.h): each option
 * goes in through its own setter, checked there.  The command has
 * checked them already, so a refusal here is a bug, said as the library
 * words it.
 */
#include "cli.h"

errcode_t cli_set_options(struct e2trim *t, const struct cli_opts *o)
{
	unsigned int flags = 0;
	errcode_t err;

	if (o->dryrun)
		flags |= E2TRIM_FLAG_DRYRUN;
	if (o->force)
		flags |= E2TRIM_FLAG_FORCE;
	if (o->no_verify)
		flags |= E2TRIM_FLAG_NO_VERIFY;
	/* partition and offset exclude each other: clear before setting */
	err = e2trim_set_partition(t, 0);
	if (!err)
		err = e2trim_set_offset(t, o->offset_bytes);
	if (!err)
		err = e2trim_set_partition(t, o->partition);
	if (!err)
		err = e2trim_set_mode(t, o->mode);
	if (!err)
		err = e2trim_set_flags(t, flags);
	if (!err)
		err = e2trim_set_format(t, o->format);
	return err;
}
