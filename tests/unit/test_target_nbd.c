// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_target_nbd.c - the NBD target and io manager against a real server
 *
 * nbdkit's memory plugin (started through socket activation, as e2trim
 * starts qemu-nbd) is a sparse disk that answers block status: what was
 * written is allocated, the rest is a hole.  What the tests hold
 * target_nbd.c and nbd_io.c to:
 *  - only allocated ranges are trimmed; holes are counted as already
 *    sparse and no request touches them (a hole trimmed makes a qcow2
 *    grow);
 *  - every request is aligned to the cluster, from the image's offset 0
 *    even when the filesystem starts elsewhere (a partition);
 *  - every request is sent: 32 allocated clusters apart, 32 trims, and
 *    none left allocated (one trim in 16 dropped but counted is seen);
 *  - a dry run sends nothing;
 *  - libext2fs's reads through e2t_nbd_io_manager return the export's bytes,
 *    shifted by "offset=", and a write is refused;
 *  - VM image formats are told by their magic, a raw disk is not taken
 *    for one, and a qcow2's cluster size comes from its header.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include <libnbd.h>

#include "image_format.h"
#include "nbd_io.h"
#include "target.h"

#define K 1024ULL
#define M (1024ULL * K)
#define DISK (8 * M)
#define CLUSTER (64 * K)

static int start_server(void **state)
{
	char *argv[] = { (char *)"nbdkit", (char *)"memory", (char *)"8M",
			 NULL };
	struct nbd_conn *c;
	char why[256] = "";

	if (e2t_nbd_conn_open_argv(&c, argv, why, sizeof(why))) {
		print_error("nbdkit memory: %s\n", why);
		return -1;
	}
	*state = c;
	return 0;
}

static int stop_server(void **state)
{
	e2t_nbd_conn_close(*state);
	return 0;
}

/* Write @len bytes of @byte at @off: allocated from now on. */
static void put(struct nbd_conn *c, uint64_t off, uint64_t len, int byte)
{
	char *buf = malloc(len);

	assert_non_null(buf);
	memset(buf, byte, len);
	assert_int_equal(nbd_pwrite(c->h, buf, len, off, 0), 0);
	free(buf);
}

/* Bytes of [off, off + len) that block status calls allocated. */
static int count_alloc(void *priv, const char *ctx, uint64_t off,
		       uint32_t *e, size_t n, int *error)
{
	uint64_t *sum = priv;
	size_t i;

	(void)ctx; (void)off; (void)error;
	for (i = 0; i + 1 < n; i += 2)
		if (!(e[i + 1] & LIBNBD_STATE_HOLE))
			*sum += e[i];
	return 0;
}

/* The memory plugin answers block status for the whole disk at once. */
static uint64_t allocated(struct nbd_conn *c)
{
	uint64_t sum = 0;
	nbd_extent_callback cb = { .callback = count_alloc,
				   .user_data = &sum };

	assert_int_equal(nbd_block_status(c->h, DISK, 0, cb, 0), 0);
	return sum;
}

static void init(struct target *t, struct nbd_conn *c, uint64_t base,
		 int dryrun)
{
	memset(t, 0, sizeof(*t));
	t->name = "test";
	t->base_bytes = base;
	t->dryrun = dryrun;
	assert_int_equal(target_nbd_init(t, c, CLUSTER, TRIM_DISCARD), 0);
}

static void test_caps(void **state)
{
	struct nbd_conn *c = *state;

	assert_int_equal(c->srv.size_bytes, DISK);
	assert_true(c->srv.can_trim);
	assert_true(c->srv.has_status);
}

static void test_only_allocated_trimmed(void **state)
{
	struct nbd_conn *c = *state;
	struct target t;

	put(c, 1 * M, 1 * M, 0xa5);
	put(c, 5 * M, 512 * K, 0xa5);
	assert_int_equal(allocated(c), 1 * M + 512 * K);
	init(&t, c, 0, 0);
	assert_int_equal(t.lim.granularity, CLUSTER);
	assert_int_equal(target_trim(&t, 0, DISK), 0);
	assert_int_equal(target_finish(&t), 0);
	assert_int_equal(t.stats.bytes, 1 * M + 512 * K);
	assert_int_equal(t.stats.requests, 2);
	assert_int_equal(t.stats.sparse_bytes, DISK - (1 * M + 512 * K));
	assert_int_equal(allocated(c), 0);
	target_close(&t);

	/* a second run: all holes, nothing sent */
	init(&t, c, 0, 0);
	assert_int_equal(target_trim(&t, 0, DISK), 0);
	assert_int_equal(target_finish(&t), 0);
	assert_int_equal(t.stats.requests, 0);
	assert_int_equal(t.stats.sparse_bytes, DISK);
	target_close(&t);
}

/* A filesystem 4 KiB into the image: clusters stay on image offsets. */
static void test_aligned_from_image_start(void **state)
{
	struct nbd_conn *c = *state;
	uint64_t base = 4 * K;
	struct target t;

	put(c, 0, 2 * M, 0x5a);
	init(&t, c, base, 0);
	assert_int_equal(t.lim.align_offset, CLUSTER - base);
	/* filesystem bytes [0, 1 MiB): image [4 KiB, 1 MiB + 4 KiB) */
	assert_int_equal(target_trim(&t, 0, 1 * M), 0);
	assert_int_equal(target_finish(&t), 0);
	/* whole clusters inside: image [64 KiB, 1 MiB) */
	assert_int_equal(t.stats.bytes, 1 * M - CLUSTER);
	assert_int_equal(t.stats.align_bytes, CLUSTER);
	assert_int_equal(allocated(c), 2 * M - (1 * M - CLUSTER));
	target_close(&t);

	/* an extent with no whole cluster inside: nothing */
	init(&t, c, base, 0);
	assert_int_equal(target_trim(&t, 1 * M + 8 * K, 60 * K), 0);
	assert_int_equal(target_finish(&t), 0);
	assert_int_equal(t.stats.requests, 0);
	assert_int_equal(t.stats.align_extents, 1);
	target_close(&t);
	/* leave the disk empty for the next test */
	assert_int_equal(nbd_trim(c->h, DISK, 0, 0), 0);
}

/* Many requests: each one sent, none only counted. */
static void test_every_request_sent(void **state)
{
	struct nbd_conn *c = *state;
	struct target t;
	uint64_t i;

	/* 32 clusters with a hole between each two: a request each */
	for (i = 0; i < 32; i++)
		put(c, 2 * i * CLUSTER, CLUSTER, 0x3c);
	assert_int_equal(allocated(c), 32 * CLUSTER);
	init(&t, c, 0, 0);
	assert_int_equal(target_trim(&t, 0, DISK), 0);
	assert_int_equal(target_finish(&t), 0);
	assert_int_equal(t.stats.requests, 32);
	assert_int_equal(t.stats.bytes, 32 * CLUSTER);
	/* the server's word: nothing of them still allocated */
	assert_int_equal(allocated(c), 0);
	target_close(&t);
}

static void test_dry_run(void **state)
{
	struct nbd_conn *c = *state;
	struct target t;

	put(c, 2 * M, 256 * K, 0x11);
	init(&t, c, 0, 1);
	assert_int_equal(target_trim(&t, 0, DISK), 0);
	assert_int_equal(target_finish(&t), 0);
	assert_int_equal(t.stats.bytes, 256 * K);
	assert_int_equal(allocated(c), 256 * K);
	target_close(&t);
	assert_int_equal(nbd_trim(c->h, DISK, 0, 0), 0);
}

static void test_reads_through_libext2fs(void **state)
{
	struct nbd_conn *c = *state;
	unsigned char buf[4096];
	io_channel ch;

	put(c, 1 * M + 4 * K, 4 * K, 0x77);
	assert_int_equal(e2t_nbd_io_manager->open(c->name, 0, &ch), 0);
	assert_int_equal(io_channel_set_options(ch, "offset=1048576"), 0);
	io_channel_set_blksize(ch, 4096);
	assert_int_equal(io_channel_read_blk64(ch, 1, -2048, buf), 0);
	assert_int_equal(buf[0], 0x77);
	assert_int_equal(buf[2047], 0x77);
	assert_int_equal(io_channel_read_blk64(ch, 0, -16, buf), 0);
	assert_int_equal(buf[0], 0);
	/* past the end: zeroes and a short read, as unix_io */
	assert_int_equal(io_channel_read_blk64(ch, 7 * M / 4096, 1, buf),
			 EXT2_ET_SHORT_READ);
	assert_int_not_equal(io_channel_write_blk64(ch, 0, 1, buf), 0);
	io_channel_close(ch);
	assert_int_not_equal(e2t_nbd_io_manager->open("/dev/null", 0, &ch), 0);
	assert_int_equal(nbd_trim(c->h, DISK, 0, 0), 0);
}

/* A file whose first bytes are @hdr (@len of them), the rest zeros. */
static int header_file(const void *hdr, size_t len)
{
	char path[] = "/tmp/test_target_nbd.XXXXXX";
	unsigned char buf[512] = { 0 };
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	memcpy(buf, hdr, len);
	assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	return fd;
}

static void test_formats_by_magic(void **state)
{
	/* qcow2 v3, cluster_bits 16 (big-endian at byte 20) */
	static const unsigned char qcow2[24] = { 'Q', 'F', 'I', 0xfb, 0, 0, 0, 3,
		[20] = 0, 0, 0, 16 };
	static const unsigned char qcow2_huge[24] = { 'Q', 'F', 'I', 0xfb, 0, 0,
		0, 3, [20] = 0, 0, 0, 40 };
	static const unsigned char qcow1[8] = { 'Q', 'F', 'I', 0xfb, 0, 0, 0, 1 };
	static const unsigned char vdi[0x44] = { [0x40] = 0x7f, 0x10, 0xda, 0xbe };
	static const unsigned char mbr[512] = { [510] = 0x55, 0xaa };
	int fd;

	(void)state;
	fd = header_file(qcow2, sizeof(qcow2));
	assert_string_equal(image_format_probe(fd), "qcow2");
	assert_int_equal(image_cluster_bytes(fd, "unused", "qcow2"), 64 * K);
	close(fd);
	/* a cluster size qemu would not accept: unknown, not 2^40 */
	fd = header_file(qcow2_huge, sizeof(qcow2_huge));
	assert_int_equal(image_cluster_bytes(fd, "unused", "qcow2"), 0);
	close(fd);
	fd = header_file(qcow1, sizeof(qcow1));
	assert_string_equal(image_format_probe(fd), "qcow");
	close(fd);
	fd = header_file(vdi, sizeof(vdi));
	assert_string_equal(image_format_probe(fd), "vdi");
	close(fd);
	fd = header_file("vhdxfile", 8);
	assert_string_equal(image_format_probe(fd), "vhdx");
	close(fd);
	fd = header_file("KDMV", 4);
	assert_string_equal(image_format_probe(fd), "vmdk");
	close(fd);
	/* a raw disk (an MBR), or nothing at all: raw */
	fd = header_file(mbr, sizeof(mbr));
	assert_null(image_format_probe(fd));
	close(fd);
	assert_null(image_format_probe(-1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_only_allocated_trimmed),
		cmocka_unit_test(test_aligned_from_image_start),
		cmocka_unit_test(test_every_request_sent),
		cmocka_unit_test(test_dry_run),
		cmocka_unit_test(test_reads_through_libext2fs),
		cmocka_unit_test(test_formats_by_magic),
	};

	return cmocka_run_group_tests(tests, start_server, stop_server);
}
