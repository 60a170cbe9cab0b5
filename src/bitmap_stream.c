// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bitmap_stream.c - the block bitmap read one group at a time
 *
 * ext2fs_read_block_bitmap() builds a bitmap of the whole filesystem: half
 * a gigabyte and seconds of work on a 15 TiB filesystem, mostly spent
 * expanding BLOCK_UNINIT groups bit by bit.  The plan only ever walks the
 * bitmap forward, so this source keeps one group's bitmap block in memory
 * and never materialises a BLOCK_UNINIT group at all.
 *
 * What a group's bitmap says must be exactly what libext2fs would say:
 *  - a group with BLOCK_UNINIT (and a valid descriptor checksum, checked
 *    for every group at open) has no bitmap on disk: it is free except for
 *    the metadata libext2fs marks for such groups (its superblock backup
 *    and descriptors, its own bitmaps and inode table);
 *  - any other group's bitmap block is read and its checksum verified;
 *  - and in every group, the metadata of BLOCK_UNINIT groups that lies in
 *    it is in use, whatever its bits say.
 * That metadata is collected once, with libext2fs's own
 * ext2fs_reserve_super_and_bgd(), into a sparse (rbtree) bitmap.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "bitmap.h"

struct bitmap_stream {
	ext2_filsys fs;
	ext2fs_block_bitmap uninit_meta;	/* see above; sparse */
	unsigned char *buf;			/* one group's bitmap */
	dgrp_t group;				/* whose bitmap is in buf */
	int loaded;				/* buf holds group's bits */
	int uninit;				/* group is BLOCK_UNINIT */
};

static int group_is_uninit(ext2_filsys fs, dgrp_t g)
{
	return ext2fs_has_group_desc_csum(fs) &&
	       ext2fs_bg_flags_test(fs, g, EXT2_BG_BLOCK_UNINIT);
}

/* What libext2fs marks in use for every BLOCK_UNINIT group. */
static errcode_t collect_uninit_meta(struct bitmap_stream *bs)
{
	ext2_filsys fs = bs->fs;
	blk64_t count = ext2fs_blocks_count(fs->super), blk;
	int saved_type = fs->default_bitmap_type;
	errcode_t err;
	dgrp_t g;

	fs->default_bitmap_type = EXT2FS_BMAP64_RBTREE;
	err = ext2fs_allocate_block_bitmap(fs, "uninit group metadata",
					   &bs->uninit_meta);
	fs->default_bitmap_type = saved_type;
	if (err)
		return err;

	for (g = 0; g < fs->group_desc_count; g++) {
		if (!ext2fs_bg_flags_test(fs, g, EXT2_BG_BLOCK_UNINIT))
			continue;
		ext2fs_reserve_super_and_bgd(fs, g, bs->uninit_meta);
		blk = ext2fs_inode_table_loc(fs, g);
		if (blk && blk + fs->inode_blocks_per_group <= count)
			ext2fs_mark_block_bitmap_range2(bs->uninit_meta, blk,
						fs->inode_blocks_per_group);
		blk = ext2fs_block_bitmap_loc(fs, g);
		if (blk && blk < count)
			ext2fs_mark_block_bitmap2(bs->uninit_meta, blk);
		blk = ext2fs_inode_bitmap_loc(fs, g);
		if (blk && blk < count)
			ext2fs_mark_block_bitmap2(bs->uninit_meta, blk);
	}
	return 0;
}

/* Read group @g's bitmap block and check it against its checksum. */
static errcode_t read_group(struct bitmap_stream *bs, dgrp_t g)
{
	ext2_filsys fs = bs->fs;
	blk64_t blk = ext2fs_block_bitmap_loc(fs, g);
	int nbytes = EXT2_CLUSTERS_PER_GROUP(fs->super) / 8;

	bs->group = g;
	bs->loaded = 0;
	bs->uninit = group_is_uninit(fs, g);
	if (bs->uninit) {
		bs->loaded = 1;
		return 0;
	}
	if (blk < fs->super->s_first_data_block ||
	    blk >= ext2fs_blocks_count(fs->super))
		return EXT2_ET_GDESC_BAD_BLOCK_MAP;
	if (io_channel_read_blk64(fs->io, blk, 1, bs->buf))
		return EXT2_ET_BLOCK_BITMAP_READ;
	if (!ext2fs_block_bitmap_csum_verify(fs, g, (char *)bs->buf, nbytes))
		return EXT2_ET_BLOCK_BITMAP_CSUM_INVALID;
	bs->loaded = 1;
	return 0;
}

/*
 * First bit in [from, end) equal to @want, or @end.  Bit i of the map is
 * bit (i % 8) of byte i / 8 (little-endian bit order, as on disk), so a
 * little-endian 64-bit load sees bits in order; whole words that cannot
 * hold the bit are skipped.
 */
static uint64_t find_bit(const unsigned char *map, uint64_t from,
			 uint64_t end, int want)
{
	uint64_t word;

	while (from < end) {
		if ((from & 63) == 0 && from + 64 <= end) {
			memcpy(&word, map + (from >> 3), sizeof(word));
			word = le64toh(word);
			if (!want)
				word = ~word;
			if (!word) {
				from += 64;
				continue;
			}
			from += __builtin_ctzll(word);
			return from < end ? from : end;
		}
		if (!!(map[from >> 3] & (1 << (from & 7))) == want)
			return from;
		from++;
	}
	return end;
}

/*
 * The free run of the current group by its own bits: the first free
 * cluster at or after @from and not after @last, and where it ends (at
 * the group's edge at the latest).  ENOENT if there is none.
 */
static errcode_t bits_run(struct bitmap_stream *bs, blk64_t from,
			  blk64_t last, blk64_t *zero, blk64_t *set)
{
	int cbits = bs->fs->cluster_ratio_bits;
	blk64_t gfirst = ext2fs_group_first_block2(bs->fs, bs->group);
	blk64_t glast = ext2fs_group_last_block2(bs->fs, bs->group);
	uint64_t bit, last_bit = (last - gfirst) >> cbits;

	if (bs->uninit) {
		*zero = from;
		*set = glast + 1;
		return 0;
	}
	bit = find_bit(bs->buf, (from - gfirst) >> cbits, last_bit + 1, 0);
	if (bit > last_bit)
		return ENOENT;
	*zero = gfirst + (bit << cbits);
	bit = find_bit(bs->buf, bit, ((glast - gfirst) >> cbits) + 1, 1);
	*set = gfirst + (bit << cbits);
	if (*set > glast + 1)
		*set = glast + 1;	/* a partial last cluster */
	return 0;
}

/*
 * The first free run of the current group that starts in [from, last],
 * after taking out the metadata of BLOCK_UNINIT groups.  ENOENT if none.
 */
static errcode_t group_run(struct bitmap_stream *bs, blk64_t from,
			   blk64_t last, uint64_t *run_start,
			   uint64_t *run_end)
{
	blk64_t glast = ext2fs_group_last_block2(bs->fs, bs->group);
	blk64_t zero, set, m;
	errcode_t err;

	if (last > glast)
		last = glast;
	while (from <= last) {
		err = bits_run(bs, from, last, &zero, &set);
		if (err)
			return err;
		/* skip metadata at the start of the run ... */
		if (!ext2fs_find_first_set_block_bitmap2(bs->uninit_meta,
							 zero, zero, &m) &&
		    ext2fs_find_first_zero_block_bitmap2(bs->uninit_meta,
							 zero, set - 1,
							 &zero)) {
			from = set;	/* all of it is metadata */
			continue;
		}
		if (zero > last)
			return ENOENT;
		/* ... and end the run where metadata begins */
		if (!ext2fs_find_first_set_block_bitmap2(bs->uninit_meta,
							 zero, set - 1, &m))
			set = m;
		*run_start = zero;
		*run_end = set;
		return 0;
	}
	return ENOENT;
}

static errcode_t stream_next_free(void *priv, uint64_t from, uint64_t last,
				  uint64_t *run_start, uint64_t *run_end)
{
	struct bitmap_stream *bs = priv;
	ext2_filsys fs = bs->fs;
	errcode_t err;
	dgrp_t g;

	while (from <= last) {
		g = ext2fs_group_of_blk2(fs, from);
		if (!bs->loaded || bs->group != g) {
			err = read_group(bs, g);
			if (err)
				return err;
		}
		err = group_run(bs, from, last, run_start, run_end);
		if (err != ENOENT)
			return err;
		from = ext2fs_group_last_block2(fs, g) + 1;
	}
	return ENOENT;
}

errcode_t bitmap_stream_open(ext2_filsys fs, struct bitmap_stream **out)
{
	struct bitmap_stream *bs;
	errcode_t err;

	err = ext2fs_get_memzero(sizeof(*bs), &bs);
	if (err)
		return err;
	bs->fs = fs;
	err = ext2fs_get_memalign(fs->blocksize, fs->blocksize, &bs->buf);
	if (!err)
		err = collect_uninit_meta(bs);
	if (err) {
		bitmap_stream_close(bs);
		return err;
	}
	*out = bs;
	return 0;
}

/*
 * Ask the kernel to read every bitmap block ahead, in runs of contiguous
 * blocks: through a loop device or on a disk, thousands of synchronous
 * single-block reads would otherwise cost more than the whole plan.
 */
static void readahead_bitmaps(struct bitmap_stream *bs)
{
	ext2_filsys fs = bs->fs;
	blk64_t start = 0, n = 0, blk;
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++) {
		if (group_is_uninit(fs, g))
			continue;
		blk = ext2fs_block_bitmap_loc(fs, g);
		if (n && blk == start + n) {
			n++;
			continue;
		}
		if (n)
			io_channel_cache_readahead(fs->io, start, n);
		start = blk;
		n = 1;
	}
	if (n)
		io_channel_cache_readahead(fs->io, start, n);
}

errcode_t bitmap_stream_check(struct bitmap_stream *bs, dgrp_t *bad_group)
{
	errcode_t err;
	dgrp_t g;

	readahead_bitmaps(bs);

	for (g = 0; g < bs->fs->group_desc_count; g++) {
		err = read_group(bs, g);
		if (err) {
			*bad_group = g;
			return err;
		}
	}
	return 0;
}

void bitmap_stream_source(struct bitmap_stream *bs, struct plan_source *src)
{
	bs->loaded = 0;
	src->next_free = stream_next_free;
	src->priv = bs;
}

void bitmap_stream_close(struct bitmap_stream *bs)
{
	if (!bs)
		return;
	if (bs->uninit_meta)
		ext2fs_free_block_bitmap(bs->uninit_meta);
	ext2fs_free_mem(&bs->buf);
	ext2fs_free_mem(&bs);
}
