/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bitmap.h - the filesystem's block bitmap as a source of free runs
 */
#ifndef E2TRIM_BITMAP_H
#define E2TRIM_BITMAP_H

#include <ext2fs/ext2fs.h>

#include "plan.h"

/* The geometry the plan needs, read off the superblock. */
void bitmap_geometry(ext2_filsys fs, struct plan_geometry *geo);

/* A plan source over fs->block_map, which must already be read. */
void bitmap_source(ext2_filsys fs, struct plan_source *src);

#endif /* E2TRIM_BITMAP_H */
