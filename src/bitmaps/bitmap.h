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
 * Marks in a block bitmap, run together where they touch: in an rbtree
 * bitmap every mark costs a tree search and often an allocation, and
 * with flex_bg the bitmaps and inode tables of many groups lie end to
 * end.  Add ranges (at most 2^32 - 1 blocks each), then flush.
 */
struct mark_run {
	ext2fs_block_bitmap map;
	blk64_t start, len;
};

void mark_run_add(struct mark_run *mr, blk64_t blk, blk64_t len);
void mark_run_flush(struct mark_run *mr);

/*
 * The free runs of the block bitmap, read one group at a time: memory is
 * a window of bitmap blocks, the metadata of BLOCK_UNINIT groups and the
 * list of free runs the check found.  See bitmap_stream.c.
 */
struct bitmap_stream;

/*
 * @fd is the device or image libext2fs reads (-1 if none of ours), the
 * filesystem starting @offset_bytes into it; see bitmap_read.c.
 */
errcode_t bitmap_stream_open(ext2_filsys fs, int fd, uint64_t offset_bytes,
			     struct bitmap_stream **out);

/*
 * Read every group's bitmap once and verify its checksum, so that a bad
 * one is refused before anything is trimmed.  Sets @bad_group on error.
 * Up to @max_runs of the free runs found are kept for the sources that
 * follow (16 bytes each; 0 keeps none); with more than that, each source
 * reads the bitmap again.
 */
errcode_t bitmap_stream_check(struct bitmap_stream *bs, size_t max_runs,
			      dgrp_t *bad_group);

/*
 * The free clusters of each group as the check found them (what e2fsck
 * compares bg_free_blocks_count with), or NULL before a successful check.
 */
const __u32 *bitmap_stream_free_clusters(const struct bitmap_stream *bs);

/*
 * A source of the free runs (plan.h): the kept list once the check has
 * run, or else the bitmap read again.  Any number of sources may be taken
 * one after the other; each starts afresh.
 */
void bitmap_stream_source(struct bitmap_stream *bs, struct plan_source *src);
void bitmap_stream_close(struct bitmap_stream *bs);

/*
 * Bitmap blocks read in batches; see bitmap_read.c.  Reads @n (at most
 * BITMAP_READ_BATCH) blocks @blk[] and returns the buffer that holds
 * block i at i * blocksize, valid until the next call; sets @err[i] to 0
 * or EXT2_ET_BLOCK_BITMAP_READ (all of them to EXT2_ET_NO_MEMORY, and
 * returns NULL, when no buffer could be had).
 */
#define BITMAP_READ_BATCH 64

struct bitmap_read;

errcode_t bitmap_read_open(ext2_filsys fs, int fd, uint64_t offset_bytes,
			   struct bitmap_read **out);
const unsigned char *bitmap_read_blocks(struct bitmap_read *br,
					const blk64_t *blk, unsigned int n,
					errcode_t *err);
void bitmap_read_close(struct bitmap_read *br);

#endif /* E2TRIM_BITMAP_H */
