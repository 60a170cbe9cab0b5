/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open_paths.h - every path to the target's bytes, held or refused
 *                (open_paths.c)
 */
#ifndef E2TRIM_OPEN_PATHS_H
#define E2TRIM_OPEN_PATHS_H

#include <sys/stat.h>

#include "e2trim_int.h"

/*
 * The target is the regular file @st: remember its device and inode for
 * open_paths_hold() and the loop devices' second look.
 */
void open_paths_file(struct e2trim *t, const struct stat *st);

/*
 * Once the target's bytes are known (after its partition or offset):
 * every other path to them.  Loop devices over the same file (any name,
 * any overlapping offset range) are refused (10) when in use and held
 * (O_EXCL) when not; a loop target's backing file gets qemu's locks (26
 * if a VM holds it); a process holding any of them open for writing, or
 * a FUSE mount of the file, is refused (10).  0 for targets without a
 * file under them (a disk, NBD, RBD).
 */
errcode_t open_paths_hold(struct e2trim *t);

/*
 * Before the first discard: the processes again (a FUSE server or a
 * writer that came since open, 10).  The _now_and_then form, between
 * batches, looks at most once a second and never for more than 1/20 of
 * the time.
 */
errcode_t open_paths_recheck(struct e2trim *t);
errcode_t open_paths_recheck_now_and_then(struct e2trim *t);

/*
 * A check or the verification refused @err: if a path to the bytes is in
 * use now (a loop device attached since open, a writer, a FUSE mount),
 * that is what went wrong, and the refusal is that (10) instead; if a
 * writer came and went, leaving its trace in what the plan rests on, it
 * is 26 (open_witness.c): never a repair command (e2fsck) for a
 * filesystem another program wrote.  @err otherwise.
 */
errcode_t open_paths_in_use_first(struct e2trim *t, errcode_t err);

/* Close what open_paths_hold() kept beside the loop devices. */
void open_paths_close(struct e2trim *t);

#endif /* E2TRIM_OPEN_PATHS_H */
