// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_itable_read.c - the inodes e2trim reads, against libext2fs's scan
 *
 * Real filesystems made by mke2fs and aged with debugfs, in the layouts
 * where inode tables are easiest to get wrong: flex_bg with INODE_UNINIT
 * groups and itable_unused tails, no flex_bg, every group initialized,
 * 128-, 256- and 1024-byte inodes, 1 KiB blocks, bigalloc, ext2 without
 * group checksums, metadata_csum; and a bad block in the middle of an
 * inode table (put into fs->badblocks, which both readers honour).
 *
 * The oracle is libext2fs itself: ext2fs_get_next_inode_full() with its
 * group callback.  itable_scan() must hand on every inode the scan
 * returns that is not all zeros (or that is reserved or marked in the
 * inode bitmap), byte for byte and with the same error, no other, and
 * call group_done() for the same groups in the same order with the first
 * inode the scan did not read.  Each image is read through libext2fs,
 * through io_uring, and through io_uring with every other completion cut
 * short or failed (range_read_fault), which must change nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "unit_sh.h"
#include <et/com_err.h>

#include "itable_read.h"
#include "range_read.h"

#define MAX_EVENTS 200000

/* An inode handed on (kind 0) or a group done (kind 1). */
struct event {
	int kind;
	__u32 id, next;
	errcode_t err;
	unsigned char bytes[1024];
};

struct events {
	size_t n;
	struct event ev[MAX_EVENTS];
};

static struct events want, got;
static char dir[] = "/tmp/e2trim-test-itable.XXXXXX";
static int isz;

static struct event *add(struct events *e, int kind, __u32 id)
{
	struct event *ev;

	assert_true(e->n < MAX_EVENTS);
	ev = &e->ev[e->n++];
	memset(ev, 0, offsetof(struct event, bytes));
	ev->kind = kind;
	ev->id = id;
	return ev;
}

static int zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	return !n || (!c[0] && !memcmp(c, c + 1, n - 1));
}

/* Would itable_scan() hand on this inode? */
static int handed_on(ext2_filsys fs, ext2_ino_t ino, const void *p,
		     errcode_t err)
{
	return err || !zero(p, isz) || ino < EXT2_FIRST_INODE(fs->super) ||
	       !fs->inode_map || ext2fs_test_inode_bitmap2(fs->inode_map, ino);
}

static ext2_ino_t oracle_last;

static errcode_t oracle_done(ext2_filsys fs, ext2_inode_scan scan,
			     dgrp_t g, void *priv)
{
	__u32 first = g * EXT2_INODES_PER_GROUP(fs->super) + 1;
	struct event *ev = add(priv, 1, g);

	(void)scan;
	ev->next = oracle_last >= first ? oracle_last + 1 : first;
	return 0;
}

static void oracle(ext2_filsys fs)
{
	struct ext2_inode_large inode[8];	/* 1024 bytes */
	ext2_inode_scan scan;
	struct event *ev;
	ext2_ino_t ino;
	errcode_t err;

	want.n = 0;
	oracle_last = 0;
	fs->flags |= EXT2_FLAG_IGNORE_CSUM_ERRORS;
	assert_int_equal(ext2fs_open_inode_scan(fs, 0, &scan), 0);
	ext2fs_set_inode_callback(scan, oracle_done, &want);
	for (;;) {
		err = ext2fs_get_next_inode_full(scan, &ino, (void *)inode,
						 isz);
		if (err != EXT2_ET_BAD_BLOCK_IN_INODE_TABLE)
			assert_int_equal(err, 0);
		if (!ino)
			break;
		oracle_last = ino;
		if (!handed_on(fs, ino, inode, err))
			continue;
		ev = add(&want, 0, ino);
		ev->err = err;
		memcpy(ev->bytes, inode, isz);
	}
	ext2fs_close_inode_scan(scan);
	fs->flags &= ~EXT2_FLAG_IGNORE_CSUM_ERRORS;
}

static errcode_t got_inode(void *priv, ext2_ino_t ino,
			   const struct ext2_inode *inode, errcode_t err)
{
	struct event *ev = add(priv, 0, ino);

	ev->err = err;
	memcpy(ev->bytes, inode, isz);
	return 0;
}

static errcode_t got_group(void *priv, dgrp_t g, ext2_ino_t next)
{
	add(priv, 1, g)->next = next;
	return 0;
}

static void compare(const char *what)
{
	size_t i;

	for (i = 0; i < want.n && i < got.n; i++) {
		const struct event *w = &want.ev[i], *g = &got.ev[i];

		if (w->kind != g->kind || w->id != g->id || w->next != g->next ||
		    w->err != g->err || memcmp(w->bytes, g->bytes, isz))
			fail_msg("%s: event %zu is %s %u (next %u, err %ld), "
				 "libext2fs says %s %u (next %u, err %ld)%s",
				 what, i, g->kind ? "group" : "inode", g->id,
				 g->next, (long)g->err,
				 w->kind ? "group" : "inode", w->id, w->next,
				 (long)w->err,
				 memcmp(w->bytes, g->bytes, isz) ?
				 ", bytes differ" : "");
	}
	if (want.n != got.n)
		fail_msg("%s: %zu events, libext2fs says %zu", what, got.n,
			 want.n);
}

static unsigned int faults;

/* Every other read: short by a block, failed, or to be tried again. */
static int cut(int res, unsigned int len)
{
	static const int errs[] = { -EIO, -EAGAIN, -EINVAL };

	if (faults++ % 2)
		return res;
	if (faults % 6 == 0)
		return len > 1024 ? (int)len - 1024 : 0;
	return errs[(faults / 2) % 3];
}

static void check_fs(ext2_filsys fs, int fd, const char *img,
		     const char *how)
{
	static const struct itable_ops ops = { .inode = got_inode,
					       .group_done = got_group };
	char what[256];
	int mode;

	oracle(fs);
	assert_true(want.n > fs->group_desc_count);	/* inodes too */
	for (mode = 0; mode < 3; mode++) {
		got.n = 0;
		faults = 0;
		range_read_fault = mode == 2 ? cut : NULL;
		assert_int_equal(itable_scan(fs, mode ? fd : -1, 0, &ops,
					     &got), 0);
		range_read_fault = NULL;
		if (mode == 2)
			assert_true(faults > 0);
		snprintf(what, sizeof(what), "%s (%s, %s)", img, how,
			 mode == 0 ? "libext2fs" : mode == 1 ? "io_uring" :
			 "io_uring, faults");
		compare(what);
	}
}

static void check_image(const char *img)
{
	ext2_filsys fs;
	int fd;

	assert_int_equal(ext2fs_open2(img, NULL, EXT2_FLAG_64BITS, 0, 0,
				      unix_io_manager, &fs), 0);
	isz = EXT2_INODE_SIZE(fs->super);
	fd = open(img, O_RDONLY);
	assert_true(fd >= 0);
	/* no inode bitmap: every inode the scan returns is handed on */
	check_fs(fs, fd, img, "no inode bitmap");
	assert_int_equal(ext2fs_read_inode_bitmap(fs), 0);
	check_fs(fs, fd, img, "inode bitmap");
	close(fd);
	ext2fs_close_free(&fs);
}

/* mke2fs @opts, then 60 files and directories, every third removed. */
static void make_aged(const char *name, const char *size, const char *opts)
{
	char img[128];

	snprintf(img, sizeof(img), "%s/%s.img", dir, name);
	sh("PATH=$PATH:/sbin:/usr/sbin mke2fs -q -F %s %s %s >/dev/null", opts,
	   img, size);
	sh("cd %s && head -c 20480 /dev/urandom > data && "
	   "for i in $(seq 1 60); do head -c $((i * 300)) data > f$i; "
	   "echo \"write f$i f$i\"; echo \"mkdir d$i\"; done > cmds && "
	   "for i in $(seq 1 3 60); do echo \"rm f$i\"; done >> cmds && "
	   "PATH=$PATH:/sbin:/usr/sbin debugfs -w -f cmds %s >/dev/null 2>&1",
	   dir, img);
	check_image(img);
}

static void ext4_flex_bg_uninit(void **state)
{
	(void)state;
	make_aged("flex", "128M", "-t ext4 -g 4096 -G 4 -N 4096 "
		  "-E lazy_itable_init=1");
}

static void ext4_all_initialized(void **state)
{
	(void)state;
	make_aged("init", "128M", "-t ext4 -O ^metadata_csum,^uninit_bg "
		  "-g 4096 -N 4096");
}

static void ext4_no_flex_128(void **state)
{
	(void)state;
	make_aged("noflex", "64M", "-t ext4 -O ^flex_bg -I 128 -g 4096 "
		  "-N 2048");
}

static void ext4_1k_blocks_1024_inodes(void **state)
{
	(void)state;
	make_aged("big-inode", "40M", "-t ext4 -b 1024 -I 1024 -N 2048");
}

static void ext4_bigalloc(void **state)
{
	(void)state;
	make_aged("bigalloc", "256M", "-t ext4 -O bigalloc -C 16384");
}

static void ext2_no_checksums(void **state)
{
	(void)state;
	make_aged("ext2", "48M", "-t ext2 -b 1024 -N 3000");
}

/* A bad block in the middle of group 1's inode table, in memory. */
static void bad_block_in_inode_table(void **state)
{
	char img[128];
	ext2_filsys fs;
	blk64_t blk;
	int fd;

	(void)state;
	snprintf(img, sizeof(img), "%s/init.img", dir);
	assert_int_equal(ext2fs_open2(img, NULL, EXT2_FLAG_64BITS, 0, 0,
				      unix_io_manager, &fs), 0);
	isz = EXT2_INODE_SIZE(fs->super);
	assert_int_equal(ext2fs_read_bb_inode(fs, &fs->badblocks), 0);
	blk = ext2fs_inode_table_loc(fs, 1) + fs->inode_blocks_per_group / 2;
	assert_int_equal(ext2fs_badblocks_list_add(fs->badblocks, blk), 0);
	assert_int_equal(ext2fs_badblocks_list_add(fs->badblocks,
			ext2fs_inode_table_loc(fs, 0)), 0);
	assert_int_equal(ext2fs_read_inode_bitmap(fs), 0);
	fd = open(img, O_RDONLY);
	assert_true(fd >= 0);
	check_fs(fs, fd, img, "bad blocks");
	close(fd);
	ext2fs_close_free(&fs);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	add_error_table(&et_ext2_error_table);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf %s", dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ext4_flex_bg_uninit),
		cmocka_unit_test(ext4_all_initialized),
		cmocka_unit_test(ext4_no_flex_128),
		cmocka_unit_test(ext4_1k_blocks_1024_inodes),
		cmocka_unit_test(ext4_bigalloc),
		cmocka_unit_test(ext2_no_checksums),
		cmocka_unit_test(bad_block_in_inode_table),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
