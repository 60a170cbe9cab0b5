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
 * It calls the library's public entry points only (e2trim_open,
 * e2trim_check, e2trim_plan, e2trim_apply with dryrun), as the command
 * does.  Beyond "no crash, no leak, no undefined behaviour" it checks
 * what e2trim promises of every plan it makes against libext2fs opened
 * on the same image by itself: extents in ascending order, merged, on
 * block boundaries, inside the filesystem's data blocks, all of them
 * free in libext2fs's bitmap; apply's extents aligned to the
 * granularity, and the dry run's counts adding up to the plan's.  A
 * broken promise aborts.
 *
 *   E2TRIM_FUZZ_SAVE=out.img fuzz_open_plan crash-...
 * writes the image an input stands for, to become a regression image.
 */
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

#include "e2trim.h"

#define MAX_IMAGE (128U << 20)
#define FIX_CSUMS (1U << 31)	/* in the size field */
#define UNIT 1024
#define MAX_RECORDS 4096


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

/* What libext2fs itself says of the image: the oracle for every plan. */
struct oracle {
	ext2_filsys fs;			/* NULL: libext2fs cannot open it */
	int have_map;			/* its block bitmap was read */
	uint64_t block_size, first_data_block, blocks;
};

static void oracle_open(struct oracle *o)
{
	memset(o, 0, sizeof(*o));
	if (ext2fs_open2(img_path, NULL, EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP,
			 0, 0, unix_io_manager, &o->fs)) {
		o->fs = NULL;
		return;
	}
	o->block_size = o->fs->blocksize;
	o->first_data_block = o->fs->super->s_first_data_block;
	o->blocks = ext2fs_blocks_count(o->fs->super);
	o->have_map = !ext2fs_read_block_bitmap(o->fs);
}

struct check {
	const struct oracle *o;
	uint64_t next;			/* the next extent starts after it */
	uint64_t extents, bytes;
	uint64_t granularity;		/* e2trim_apply's extents: aligned */
};

/* e2trim_plan(): the filesystem's free extents; see the top of the file. */
static int check_extent(void *priv, uint64_t start_bytes, uint64_t len_bytes)
{
	struct check *c = priv;
	uint64_t bs = c->o->block_size, blk = start_bytes / bs;

	if (!len_bytes || start_bytes % bs || len_bytes % bs)
		abort();
	if (blk < c->o->first_data_block ||
	    len_bytes / bs > c->o->blocks - blk)
		abort();
	if (c->extents && start_bytes <= c->next)
		abort();	/* not ascending, or not merged */
	if (c->o->have_map &&
	    !ext2fs_test_block_bitmap_range2(c->o->fs->block_map, blk,
					     len_bytes / bs))
		abort();	/* libext2fs says some of it is in use */
	c->next = start_bytes + len_bytes;
	c->extents++;
	c->bytes += len_bytes;
	return 0;
}

/* e2trim_apply(): the same extents, trimmed inward to the granularity. */
static int check_aligned(void *priv, uint64_t start_bytes, uint64_t len_bytes)
{
	struct check *c = priv;

	if (!len_bytes || start_bytes % c->granularity ||
	    len_bytes % c->granularity)
		abort();
	if (c->extents && start_bytes < c->next)
		abort();
	if ((start_bytes + len_bytes) / c->o->block_size > c->o->blocks)
		abort();
	c->next = start_bytes + len_bytes;
	c->extents++;
	c->bytes += len_bytes;
	return 0;
}

static uint64_t inputs, planned;
static const char *counts_path;

/* E2TRIM_FUZZ_COUNTS=FILE: how many inputs ran and how many got a plan. */
static void save_counts(void)
{
	FILE *f;

	if (!counts_path)
		return;
	f = fopen(counts_path, "w");
	if (!f)
		abort();
	fprintf(f, "%llu %llu\n", (unsigned long long)inputs,
		(unsigned long long)planned);
	if (fclose(f))
		abort();
}

/*
 * The library's own entry points, as `e2trim -n --list` calls them: the
 * plan, then a dry-run apply, each checked against libext2fs and against
 * the other.  The gates have passed.
 */
static void dry_run(struct e2trim *t)
{
	struct check plan = { 0 }, applied = { 0 };
	const struct e2trim_result *r;
	struct oracle o;

	oracle_open(&o);
	if (!o.fs)
		return;		/* e2trim opened what libext2fs cannot */
	plan.o = applied.o = &o;
	if (e2trim_plan(t, check_extent, &plan))
		goto out;
	r = e2trim_result(t);
	if (r->extents != plan.extents || r->extent_bytes != plan.bytes)
		abort();
	applied.granularity = r->granularity_bytes ? r->granularity_bytes : 1;
	if (e2trim_apply(t, check_aligned, &applied))
		goto out;
	r = e2trim_result(t);
	planned++;
	if (r->extents != plan.extents || r->extent_bytes != plan.bytes)
		abort();	/* apply walked another plan */
	if (r->bytes_trimmed + r->bytes_already_sparse != applied.bytes ||
	    applied.bytes + r->bytes_kept_for_alignment != plan.bytes)
		abort();	/* the dry run's counts do not add up */
out:
	ext2fs_close_free(&o.fs);
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
	img_fd = memfd_create("e2trim-fuzz", MFD_CLOEXEC);
	if (img_fd < 0) {
		perror("memfd_create");
		exit(1);
	}
	snprintf(img_path, sizeof(img_path), "/proc/self/fd/%d", img_fd);
	save_path = getenv("E2TRIM_FUZZ_SAVE");
	counts_path = getenv("E2TRIM_FUZZ_COUNTS");
	/* set-up that fails makes every input "refused": say so and stop */
	if (access(img_path, R_OK | W_OK)) {
		perror(img_path);
		exit(1);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct e2trim *tfs;

	if (size < 4)
		return -1;
	build_image(img_fd, data, size);
	if (get_le(data, 4) & FIX_CSUMS)
		fix_checksums();
	if (save_path)
		save_image(save_path);
	if (e2trim_new(&tfs))
		abort();
	if (!e2trim_set_flags(tfs, E2TRIM_FLAG_DRYRUN) &&
	    !e2trim_open(tfs, img_path) && !e2trim_check(tfs))
		dry_run(tfs);
	e2trim_free(tfs);
	inputs++;
	save_counts();
	return 0;
}
