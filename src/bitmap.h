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

/*
 * The free runs of the block bitmap, read one group at a time: memory is
 * one bitmap block plus the metadata of BLOCK_UNINIT groups.  See
 * bitmap_stream.c.
 */
struct bitmap_stream;

errcode_t bitmap_stream_open(ext2_filsys fs, struct bitmap_stream **out);

/*
 * Read every group's bitmap once and verify its checksum, so that a bad
 * one is refused before anything is trimmed.  Sets @bad_group on error.
 */
errcode_t bitmap_stream_check(struct bitmap_stream *bs, dgrp_t *bad_group);

void bitmap_stream_source(struct bitmap_stream *bs, struct plan_source *src);
void bitmap_stream_close(struct bitmap_stream *bs);

#endif /* E2TRIM_BITMAP_H */
