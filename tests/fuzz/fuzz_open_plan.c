// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_open_plan.c - libFuzzer target: mutated filesystem images through
 * open, the gates, verification and the plan, as `e2trim -n --list` runs
 * them
 *
 * The input is not a raw image (see pack.py): a size, then records of
 * 1 KiB units to place in an otherwise zero image.  The image is built
 * in a memfd each time and opened by its /proc/self/fd path, since
 * libext2fs's unix_io opens by name; holes cost nothing, so a 128 MiB
 * image costs what its records do.  With bit 31 of the size set, the
 * superblock, descriptor and bitmap checksums are made right again
 * after the mutation, so that it gets past them to what they protect.
 * The mutator spreads mutations over the records rather than the bytes,
 * and favours the superblock and the descriptors.
 *
 * Beyond "no crash, no leak, no undefined behaviour" the target checks
 * what e2trim promises of every plan it makes: extents in ascending
 * order, merged, on block boundaries, inside the filesystem's data
 * blocks, all of them free in the bitmap libext2fs reads by itself, and
 * the dry-run target's counts adding up.  A broken promise aborts.
 *
 *   E2TRIM_FUZZ_SAVE=out.img fuzz_open_plan crash-...
 * writes the image an input stands for, to become a regression image.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <et/com_err.h>
#include <ext2fs/ext2fs.h>

#include "bitmap.h"
#include "e2trim.h"
#include "open.h"
#include "plan.h"
#include "target.h"

/* Verification came later than the rest: fuzz it when it is built in. */
#if __has_include("verify.h")
#include "verify.h"
#pragma weak verify_free_space
#define HAVE_VERIFY 1
#endif

#define MAX_IMAGE (128U << 20)
#define FIX_CSUMS (1U << 31)	/* in the size field */
#define UNIT 1024
#define MAX_RECORDS 4096

const char *program_name = "e2trim";

static int img_fd = -1;
static char img_path[64];
static const char *save_path;

static uint32_t get_le(const uint8_t *p, int n)
{
	uint32_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* Lay the records of @data out in @fd, zeros everywhere else. */
static void build_image(int fd, const uint8_t *data, size_t size)
{
	uint64_t img_size, off, len;

	img_size = get_le(data, 4) & ~FIX_CSUMS;
	if (img_size > MAX_IMAGE)
		img_size = MAX_IMAGE;
	data += 4;
	size -= 4;
	if (ftruncate(fd, 0) || ftruncate(fd, img_size))
		abort();
	while (size >= 6) {
		off = (uint64_t)get_le(data, 4) * UNIT;
		len = (uint64_t)get_le(data + 4, 2) * UNIT;
		data += 6;
		size -= 6;
		if (len > size)
			len = size;
		if (off < img_size &&
		    pwrite(fd, data, len < img_size - off ? len :
			   img_size - off, off) < 0)
			abort();
		data += len;
		size -= len;
	}
}

/*
 * What e2fsck -f would not notice: every checksum e2trim checks before it
 * reads a bitmap, set to match what the mutation left.  Only the primary
 * superblock and descriptors are written.
 */
static void fix_checksums(void)
{
	int flags = EXT2_FLAG_RW | EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP |
		    EXT2_FLAG_IGNORE_CSUM_ERRORS | EXT2_FLAG_MASTER_SB_ONLY;
	blk64_t count, blk;
	ext2_filsys fs;
	char *buf;
	dgrp_t g;

	if (ext2fs_open2(img_path, NULL, flags, 0, 0, unix_io_manager, &fs))
		return;
	count = ext2fs_blocks_count(fs->super);
	if (!ext2fs_get_mem(fs->blocksize, &buf)) {
		for (g = 0; g < fs->group_desc_count; g++) {
			blk = ext2fs_block_bitmap_loc(fs, g);
			if (blk && blk < count &&
			    !io_channel_read_blk64(fs->io, blk, 1, buf))
				ext2fs_block_bitmap_csum_set(fs, g, buf,
					EXT2_CLUSTERS_PER_GROUP(fs->super) / 8);
			blk = ext2fs_inode_bitmap_loc(fs, g);
			if (blk && blk < count &&
			    !io_channel_read_blk64(fs->io, blk, 1, buf))
				ext2fs_inode_bitmap_csum_set(fs, g, buf,
					EXT2_INODES_PER_GROUP(fs->super) / 8);
			ext2fs_group_desc_csum_set(fs, g);
		}
		ext2fs_free_mem(&buf);
	}
	ext2fs_mark_super_dirty(fs);
	ext2fs_close_free(&fs);
}

/* A sparse copy of the image, to become a regression image. */
static void save_image(const char *path)
{
	static char buf[64 << 10], zero[64 << 10];
	off_t pos = 0, size = lseek(img_fd, 0, SEEK_END);
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, size)) {
		perror(path);
		exit(1);
	}
	while ((n = pread(img_fd, buf, sizeof(buf), pos)) > 0) {
		if (memcmp(buf, zero, n) && pwrite(fd, buf, n, pos) != n) {
			perror(path);
			exit(1);
		}
		pos += n;
	}
	close(fd);
}

struct check {
	const struct plan_geometry *geo;
	ext2fs_block_bitmap map;	/* libext2fs's own reading, or NULL */
	struct target *t;
	uint64_t next;			/* the next extent starts after it */
	uint64_t extents;
};

/* What every extent of every plan must be; see the top of the file. */
static int check_extent(void *priv, uint64_t start_bytes, uint64_t len_bytes)
{
	struct check *c = priv;
	uint64_t bs = c->geo->block_size, blk = start_bytes / bs;

	if (!len_bytes || start_bytes % bs || len_bytes % bs)
		abort();
	if (blk < c->geo->first_data_block ||
	    len_bytes / bs > c->geo->blocks_count - blk)
		abort();
	if (c->extents && start_bytes <= c->next)
		abort();	/* not ascending, or not merged */
	if (c->map && !ext2fs_test_block_bitmap_range2(c->map, blk,
						       len_bytes / bs))
		abort();	/* libext2fs says some of it is in use */
	c->next = start_bytes + len_bytes;
	c->extents++;
	return target_trim(c->t, start_bytes, len_bytes);
}

/* main()'s trim(), for a dry run; the gates have passed. */
static void dry_run(const struct e2trim_control *ctl, struct e2trim_fs *tfs)
{
	struct plan_range range = { 0, UINT64_MAX, 0 };
	struct plan_geometry geo;
	struct plan_source src;
	struct plan_blocks blk;
	struct plan_stats st;
	struct target t;
	struct check c;
	const struct target_stats *ts = &t.stats;

	bitmap_geometry(tfs->fs, &geo);
	bitmap_stream_source(tfs->stream, &src);
	if (plan_check_range(&geo, &range, &blk))
		return;
#ifdef HAVE_VERIFY
	if (verify_free_space &&
	    verify_free_space(ctl, tfs->fs, tfs->fd, tfs->offset_bytes,
			      &src, &geo,
			      bitmap_stream_free_clusters(tfs->stream)) != EXIT_OK)
		return;
#endif
	memset(&t, 0, sizeof(t));
	t.name = ctl->device;
	t.dryrun = 1;
	if (target_file_init(&t, tfs->fd, TRIM_DISCARD))
		abort();
	memset(&c, 0, sizeof(c));
	c.geo = &geo;
	c.t = &t;
	/* the whole bitmap in memory: fine for images of 128 MiB at most */
	if (!ext2fs_read_block_bitmap(tfs->fs))
		c.map = tfs->fs->block_map;
	if (!plan_run(&geo, &range, &src, check_extent, &c, &st) &&
	    (c.extents != st.extents ||
	     ts->bytes + ts->sparse_bytes + ts->align_bytes != st.bytes))
		abort();
	target_close(&t);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed);

/*
 * libFuzzer mutates bytes uniformly: of a 300 KiB input, the superblock
 * would get one mutation in 300.  Instead, one time in four libFuzzer's
 * own mutation goes over the whole input (moving and resizing records,
 * crossing inputs over, flipping the checksum bit); otherwise one 1 KiB
 * unit of one record is mutated in place, a unit of the first 8 KiB of
 * the image (superblock, descriptors) half of those times.
 */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	static size_t rec_off[MAX_RECORDS], rec_len[MAX_RECORDS];
	static uint8_t unit[UNIT];
	size_t pos = 4, n = 0, nhead = 0, len, r, u;

	if (size < 4 || seed % 4 == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	seed /= 4;
	/* records that start in the first 8 KiB come first */
	while (pos + 6 <= size && n < MAX_RECORDS) {
		len = (size_t)get_le(data + pos + 4, 2) * UNIT;
		if (len > size - pos - 6)
			len = size - pos - 6;
		if (len) {
			rec_off[n] = pos + 6;
			rec_len[n] = len;
			if (get_le(data + pos, 4) < 8 && n > nhead) {
				rec_off[n] = rec_off[nhead];
				rec_len[n] = rec_len[nhead];
				rec_off[nhead] = pos + 6;
				rec_len[nhead] = len;
			}
			if (get_le(data + pos, 4) < 8)
				nhead++;
			n++;
		}
		pos += 6 + len;
	}
	if (!n)
		return LLVMFuzzerMutate(data, size, max_size);
	if (nhead && seed % 2 == 0) {
		r = (seed / 2) % nhead;
		u = (seed / 2 / nhead) % 8;
	} else {
		r = (seed / 2) % n;
		u = (seed / 2 / n) % ((rec_len[r] + UNIT - 1) / UNIT);
	}
	pos = rec_off[r] + u * UNIT;
	if (pos >= rec_off[r] + rec_len[r])
		pos = rec_off[r];
	len = rec_off[r] + rec_len[r] - pos;
	if (len > UNIT)
		len = UNIT;
	/* in place: a mutation that shrinks the unit leaves its tail */
	memcpy(unit, data + pos, len);
	LLVMFuzzerMutate(unit, len, len);
	memcpy(data + pos, unit, len);
	return size;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	add_error_table(&et_ext2_error_table);
	img_fd = memfd_create("e2trim-fuzz", MFD_CLOEXEC);
	if (img_fd < 0) {
		perror("memfd_create");
		exit(1);
	}
	snprintf(img_path, sizeof(img_path), "/proc/self/fd/%d", img_fd);
	save_path = getenv("E2TRIM_FUZZ_SAVE");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct e2trim_control ctl = {
		.device = img_path,
		.len_bytes = UINT64_MAX,
		.dryrun = 1,
	};
	struct e2trim_fs tfs;

	if (size < 4)
		return -1;
	build_image(img_fd, data, size);
	if (get_le(data, 4) & FIX_CSUMS)
		fix_checksums();
	if (save_path)
		save_image(save_path);
	if (e2trim_fs_open(&ctl, &tfs) == EXIT_OK) {
		dry_run(&ctl, &tfs);
		e2trim_fs_close(&tfs);
	}
	return 0;
}
