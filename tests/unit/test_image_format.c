// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_image_format.c - which bytes may choose an image's format, and
 *                       qemu's image locks
 *
 * Images are built byte by byte in a memfd: an ext superblock (magic,
 * block size, counts) at 1024 of the file or of a partition, an MBR, a
 * GPT header whose protective MBR is gone, a qcow2 header as qemu-img
 * writes one (version 3, 64 KiB clusters, refcount table at 64 KiB, L1 at
 * 192 KiB).  A VM magic alone opens a VM image only when no raw reading
 * holds.  The locks: one open file description takes them, a second sees
 * them, and they go with the first's close.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "image_format.h"
#include "image_lock.h"

#define MiB (1ULL << 20)

static int new_image(uint64_t size)
{
	int fd = memfd_create("img", 0);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	return fd;
}

static void put(int fd, uint64_t off, const void *p, size_t len)
{
	assert_int_equal(pwrite(fd, p, len, (off_t)off), (ssize_t)len);
}

static void put_le32(int fd, uint64_t off, uint32_t v)
{
	unsigned char b[4] = { v, v >> 8, v >> 16, v >> 24 };

	put(fd, off, b, 4);
}

static void put_le64(int fd, uint64_t off, uint64_t v)
{
	put_le32(fd, off, (uint32_t)v);
	put_le32(fd, off + 4, (uint32_t)(v >> 32));
}

static void put_be32(int fd, uint64_t off, uint32_t v)
{
	unsigned char b[4] = { v >> 24, v >> 16, v >> 8, v };

	put(fd, off, b, 4);
}

static void put_be64(int fd, uint64_t off, uint64_t v)
{
	put_be32(fd, off, (uint32_t)(v >> 32));
	put_be32(fd, off + 4, (uint32_t)v);
}

/* An ext4 superblock at @start + 1024: 4 KiB blocks, @blocks of them. */
static void ext_super(int fd, uint64_t start, uint32_t blocks)
{
	static const unsigned char magic[2] = { 0x53, 0xef };

	put_le32(fd, start + 1024 + 4, blocks);
	put_le32(fd, start + 1024 + 20, 0);	/* first data block */
	put_le32(fd, start + 1024 + 24, 2);	/* 4 KiB */
	put_le32(fd, start + 1024 + 32, 32768);	/* blocks per group */
	put_le32(fd, start + 1024 + 40, 8192);	/* inodes per group */
	put(fd, start + 1024 + 56, magic, 2);
}

/* qemu-img create -f qcow2's header: v3, 64 KiB clusters, 64 MiB. */
static void qcow2_header(int fd)
{
	put(fd, 0, "QFI\xfb", 4);
	put_be32(fd, 4, 3);
	put_be32(fd, 20, 16);
	put_be64(fd, 24, 64 * MiB);
	put_be32(fd, 36, 1);
	put_be64(fd, 40, 0x30000);
	put_be64(fd, 48, 0x10000);
	put_be32(fd, 56, 1);
	put_be32(fd, 96, 4);
	put_be32(fd, 100, 104);
}

static enum image_choice choose(int fd, uint64_t size, const char **fmt)
{
	return image_format_choose(fd, size, fmt);
}

static void test_plain(void **state)
{
	const char *fmt;
	int fd = new_image(64 * MiB);

	(void)state;
	ext_super(fd, 0, 16384);
	assert_int_equal(choose(fd, 64 * MiB, &fmt), IMAGE_RAW);
	assert_null(fmt);
	close(fd);

	fd = new_image(1 * MiB);	/* a real qcow2: no raw reading */
	qcow2_header(fd);
	assert_int_equal(choose(fd, 1 * MiB, &fmt), IMAGE_VM);
	assert_string_equal(fmt, "qcow2");
	close(fd);
}

static void test_header_over_ext(void **state)
{
	const char *fmt;
	int fd = new_image(64 * MiB);

	(void)state;
	ext_super(fd, 0, 16384);
	qcow2_header(fd);
	assert_int_equal(choose(fd, 64 * MiB, &fmt), IMAGE_AMBIGUOUS);
	assert_string_equal(fmt, "qcow2");
	/* a filesystem larger than the file is no raw reading */
	ext_super(fd, 0, 16385);
	assert_int_equal(choose(fd, 64 * MiB, &fmt), IMAGE_VM);
	ext_super(fd, 0, 16384);
	/* a header qemu would not open (cluster bits 0): raw */
	put_be32(fd, 20, 0);
	assert_int_equal(choose(fd, 64 * MiB, &fmt), IMAGE_RAW_MAGIC);
	put_be32(fd, 20, 16);
	/* an L1 table outside the file: raw */
	put_be64(fd, 40, 128 * MiB);
	assert_int_equal(choose(fd, 64 * MiB, &fmt), IMAGE_RAW_MAGIC);
	close(fd);

	fd = new_image(64 * MiB);	/* vmdk: the magic is all there is */
	ext_super(fd, 0, 16384);
	put(fd, 0, "KDMV", 4);
	assert_int_equal(choose(fd, 64 * MiB, &fmt), IMAGE_AMBIGUOUS);
	assert_string_equal(fmt, "vmdk");
	close(fd);
}

static void test_header_over_disk(void **state)
{
	static const unsigned char sig[2] = { 0x55, 0xaa };
	unsigned char type[16];
	const char *fmt;
	int fd = new_image(64 * MiB);

	(void)state;
	/* an MBR whose partition 1 (at 2 MiB) holds ext, the header over 0-103 */
	ext_super(fd, 2 * MiB, 4096);
	put(fd, 510, sig, 2);
	put(fd, 446 + 4, "\x83", 1);
	put_le32(fd, 446 + 8, 4096);
	put_le32(fd, 446 + 12, 32768);
	qcow2_header(fd);
	assert_int_equal(choose(fd, 64 * MiB, &fmt), IMAGE_AMBIGUOUS);
	close(fd);

	/* a GPT disk whose protective MBR was overwritten: its header at LBA 1 */
	fd = new_image(64 * MiB);
	ext_super(fd, 3 * MiB, 4096);
	put(fd, 512, "EFI PART", 8);
	put_le64(fd, 512 + 72, 2);	/* entries at LBA 2 */
	put_le32(fd, 512 + 80, 128);
	put_le32(fd, 512 + 84, 128);
	memset(type, 0x11, sizeof(type));
	put(fd, 1024 + 128 * 5, type, sizeof(type));	/* entry 6 */
	put_le64(fd, 1024 + 128 * 5 + 32, 3 * MiB / 512);
	put_le64(fd, 1024 + 128 * 5 + 40, 19 * MiB / 512 - 1);
	qcow2_header(fd);
	assert_int_equal(choose(fd, 64 * MiB, &fmt), IMAGE_AMBIGUOUS);
	/* a partition too small for its filesystem reads as nothing */
	put_le64(fd, 1024 + 128 * 5 + 40, 3 * MiB / 512 + 7);
	assert_int_equal(choose(fd, 64 * MiB, &fmt), IMAGE_VM);
	close(fd);

	/* no table left at all, but a filesystem at 1 MiB */
	fd = new_image(64 * MiB);
	ext_super(fd, 1 * MiB, 4096);
	qcow2_header(fd);
	assert_int_equal(choose(fd, 64 * MiB, &fmt), IMAGE_AMBIGUOUS);
	close(fd);
}

static void test_locks(void **state)
{
	char path[] = "/tmp/test_image_lock.XXXXXX";
	pid_t pid;
	int a, b;

	(void)state;
	a = mkstemp(path);
	assert_true(a >= 0);
	b = open(path, O_RDONLY);
	assert_true(b >= 0);
	unlink(path);
	assert_int_equal(image_lock_other(b, &pid), 0);
	assert_int_equal(image_lock_take(a), 0);
	/* its own locks are not another's */
	assert_int_equal(image_lock_other(a, &pid), 0);
	assert_int_equal(image_lock_other(b, &pid), 1);
	assert_int_equal(pid, -1);	/* an OFD lock names no process */
	/* a second taker (compatible read locks) still sees the first */
	assert_int_equal(image_lock_take(b), 0);
	assert_int_equal(image_lock_other(b, &pid), 1);
	close(a);
	assert_int_equal(image_lock_other(b, &pid), 0);
	close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_header_over_ext),
		cmocka_unit_test(test_header_over_disk),
		cmocka_unit_test(test_locks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
