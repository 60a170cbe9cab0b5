// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * options.c - the setters of what e2trim_open() is to do
 *
 * libmount's way: the caller never fills in a struct of the library's,
 * so a later release can add an option without moving anyone's layout.
 * Each setter checks its argument where it is given, and a refused one
 * leaves the handle as it was (only the detail of the error moves).
 */
#include <stdlib.h>
#include <string.h>

#include "e2trim_int.h"

#define KNOWN_FLAGS (E2TRIM_FLAG_DRYRUN | E2TRIM_FLAG_FORCE | \
		     E2TRIM_FLAG_NO_VERIFY)

/*
 * Options are for the next open: once one has succeeded, the handle is
 * what it opened, and a setter that seemed to work would change nothing.
 */
static errcode_t set_refused(struct e2trim *t)
{
	if (!t)
		return E2TRIM_ERR_INVALID_ARGUMENT;
	if (!t->path)
		return 0;
	lib_fail(t, E2TRIM_ERR_BAD_CALL, "a setter called after e2trim_open(): "
		 "the handle is already opened on %s", t->path);
	lib_fix(t, E2TRIM_ERR_BAD_CALL, "set the options before e2trim_open(); "
		"for other options, take a new handle (e2trim_new())");
	return E2TRIM_ERR_BAD_CALL;
}

errcode_t e2trim_set_partition(struct e2trim *t, unsigned int partno)
{
	errcode_t err = set_refused(t);

	if (err)
		return err;
	/* a partition's start is the table's: an offset would be ignored */
	if (partno && t->opt.offset_bytes)
		return lib_fail(t, E2TRIM_ERR_INVALID_ARGUMENT, "a partition "
				"and an offset exclude each other; set the "
				"offset to 0 first");
	t->opt.partition = partno;
	return 0;
}

errcode_t e2trim_set_offset(struct e2trim *t, uint64_t bytes)
{
	errcode_t err = set_refused(t);

	if (err)
		return err;
	if (bytes && t->opt.partition)
		return lib_fail(t, E2TRIM_ERR_INVALID_ARGUMENT, "a partition "
				"and an offset exclude each other; set the "
				"partition to 0 first");
	t->opt.offset_bytes = bytes;
	return 0;
}

errcode_t e2trim_set_mode(struct e2trim *t, enum e2trim_mode mode)
{
	errcode_t err = set_refused(t);

	if (err)
		return err;
	/* an int from a caller may be anything: compare it unsigned */
	if ((unsigned int)mode > E2TRIM_ZERO_FILL)
		return lib_fail(t, E2TRIM_ERR_INVALID_ARGUMENT,
				"no such mode: %u", (unsigned int)mode);
	t->opt.mode = mode;
	return 0;
}

errcode_t e2trim_set_flags(struct e2trim *t, unsigned int flags)
{
	errcode_t err = set_refused(t);

	if (err)
		return err;
	if (flags & ~KNOWN_FLAGS)
		return lib_fail(t, E2TRIM_ERR_INVALID_ARGUMENT, "unknown flags "
				"0x%x: this library (%s) knows 0x%x",
				flags & ~KNOWN_FLAGS, E2TRIM_VERSION,
				KNOWN_FLAGS);
	t->opt.dryrun = !!(flags & E2TRIM_FLAG_DRYRUN);
	t->opt.force = !!(flags & E2TRIM_FLAG_FORCE);
	t->opt.no_verify = !!(flags & E2TRIM_FLAG_NO_VERIFY);
	return 0;
}

/* qemu's driver names: short, lower case; nothing a shell would read */
static int format_name_ok(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-_");

	return n && n <= 15 && !s[n];
}

errcode_t e2trim_set_format(struct e2trim *t, const char *format)
{
	errcode_t err = set_refused(t);
	char *copy = NULL;

	if (err)
		return err;
	if (format && !format_name_ok(format))
		return lib_fail(t, E2TRIM_ERR_INVALID_ARGUMENT, "invalid format:"
				" %.40s (a qemu format name: qcow2, vmdk, raw"
				"...)", format);
	if (format) {
		copy = strdup(format);
		if (!copy)
			return lib_fail(t, E2TRIM_ERR_NO_MEMORY, NULL);
	}
	free(t->opt.format);
	t->opt.format = copy;
	return 0;
}

void lib_reset_result(struct e2trim *t)
{
	memset(&t->res, 0, sizeof(t->res));
	t->res.struct_size = sizeof(t->res);
	t->res.range_len_bytes = UINT64_MAX;
	memset(&t->hist, 0, sizeof(t->hist));
	t->hist.struct_size = sizeof(t->hist);
}
