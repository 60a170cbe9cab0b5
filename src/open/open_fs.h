/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open_fs.h - libext2fs's open and the superblock's gates (open_fs.c)
 */
#ifndef E2TRIM_OPEN_FS_H
#define E2TRIM_OPEN_FS_H

#include "e2trim_int.h"

/*
 * Open the filesystem on the target open.c holds, read-only: the bounds
 * (17) before the state, MMP judged, the superblock's gates; a real run
 * on an MMP filesystem then reopens read-write to take MMP.  While
 * @t->probing, only the bounds are checked.  0, or a refusal said on @t.
 */
errcode_t open_fs(struct e2trim *t);

/* What the result says of the filesystem, once open_fs() opened it. */
void open_fs_geometry(struct e2trim *t);

#endif /* E2TRIM_OPEN_FS_H */
