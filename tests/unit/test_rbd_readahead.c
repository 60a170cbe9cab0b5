// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rbd_readahead.c - reads asked ahead through librbd
 *                        (rbd_readahead.c) make reads faster, never
 *                        different
 *
 * librbd is not loaded: e2t_rbd_dl_io_aio_read() and e2t_rbd_dl_io_wait() are
 * wrapped (-Wl,--wrap) over an image in memory.  A read "lands" only
 * when it is waited for, so what a readahead serves is what the image
 * held when it was waited for, and a test can change the image between.
 *  - a read inside what was asked ahead is served from it, byte for byte;
 *  - after e2t_rbd_ra_drop_all() (before the image is reopened under the
 *    lock) nothing read before is served: a changed image reads as it is
 *    now;
 *  - a sequential walk of 4 KiB reads (the resize inode's reserved GDT
 *    blocks) costs a few large requests, not one per block;
 *  - a readahead that failed serves nothing;
 *  - every request started is waited for by the time the cache is freed
 *    (librbd never writes into a freed buffer).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include <et/com_err.h>

#include "rbd_readahead.h"

#define IMG_SIZE (8U << 20)
#define MAX_REQ 4096

static unsigned char img[IMG_SIZE];

struct req {
	void *buf;
	uint64_t off, len;
	int waited;
};

static struct req reqs[MAX_REQ];
static int nreq, nwaited, fail_next;

errcode_t __wrap_e2t_rbd_dl_io_aio_read(struct rbd_dl *d, void *buf, size_t len,
				    uint64_t off, void **comp);
errcode_t __wrap_e2t_rbd_dl_io_wait(void *comp);

errcode_t __wrap_e2t_rbd_dl_io_aio_read(struct rbd_dl *d, void *buf, size_t len,
				    uint64_t off, void **comp)
{
	struct req *r;

	(void)d;
	assert_true(nreq < MAX_REQ);
	assert_true(off + len <= IMG_SIZE);
	r = &reqs[nreq++];
	r->buf = buf;
	r->off = off;
	r->len = len;
	r->waited = 0;
	*comp = r;
	return 0;
}

/* The read lands now: the image's bytes as they are when waited for. */
errcode_t __wrap_e2t_rbd_dl_io_wait(void *comp)
{
	struct req *r = comp;

	assert_int_equal(r->waited, 0);
	r->waited = 1;
	nwaited++;
	if (fail_next) {
		fail_next = 0;
		return 5;	/* EIO */
	}
	memcpy(r->buf, img + r->off, r->len);
	return 0;
}

static void fill(unsigned char seed)
{
	size_t i;

	for (i = 0; i < IMG_SIZE; i++)
		img[i] = (unsigned char)(i * 7 + seed + (i >> 12));
}

static int setup(void **state)
{
	(void)state;
	fill(1);
	nreq = nwaited = fail_next = 0;
	return 0;
}

static void served(struct rbd_ra *ra, uint64_t off, uint64_t len)
{
	unsigned char buf[8192];

	assert_true(len <= sizeof(buf));
	assert_int_equal(e2t_rbd_ra_take(ra, buf, off, len), 1);
	assert_memory_equal(buf, img + off, len);
}

static void test_hint_served(void **state)
{
	struct rbd_ra *ra = e2t_rbd_ra_new(NULL, IMG_SIZE);

	(void)state;
	assert_non_null(ra);
	e2t_rbd_ra_start(ra, 65536, 3 * 65536);
	assert_int_equal(nreq, 1);
	served(ra, 65536 + 4096, 4096);
	served(ra, 2 * 65536 + 100, 5000);
	/* outside what was asked: the caller reads itself */
	{
		unsigned char buf[4096];

		assert_int_equal(e2t_rbd_ra_take(ra, buf, 0, 4096), 0);
		assert_int_equal(e2t_rbd_ra_take(ra, buf, 4 * 65536 - 10, 4096), 0);
	}
	e2t_rbd_ra_free(ra);
	assert_int_equal(nwaited, nreq);
}

static void test_dropped_not_served(void **state)
{
	struct rbd_ra *ra = e2t_rbd_ra_new(NULL, IMG_SIZE);
	unsigned char buf[4096];
	int i;

	(void)state;
	e2t_rbd_ra_start(ra, 0, 1 << 20);
	served(ra, 4096, 4096);		/* landed: the old bytes */
	e2t_rbd_ra_sequential(ra, 2 << 20, 4096);	/* still in flight */
	e2t_rbd_ra_drop_all(ra);
	assert_int_equal(nwaited, nreq);
	/* another client wrote meanwhile: nothing old may come back */
	fill(2);
	for (i = 0; i < 256; i++)
		assert_int_equal(e2t_rbd_ra_take(ra, buf, (uint64_t)i * 4096, 4096), 0);
	assert_int_equal(e2t_rbd_ra_take(ra, buf, 2 << 20, 4096), 0);
	/* asked again after the drop: the new bytes */
	e2t_rbd_ra_start(ra, 0, 65536);
	served(ra, 8192, 4096);
	e2t_rbd_ra_free(ra);
	assert_int_equal(nwaited, nreq);
}

static void test_sequential_few_requests(void **state)
{
	struct rbd_ra *ra = e2t_rbd_ra_new(NULL, IMG_SIZE);
	uint64_t off;
	unsigned char buf[4096];
	int direct = 0;

	(void)state;
	/* as rbd_io.c's reader: a read where the last ended asks ahead */
	for (off = 8192; off < 8192 + 127 * 4096; off += 4096) {
		if (off != 8192)
			e2t_rbd_ra_sequential(ra, off, 4096);
		if (!e2t_rbd_ra_take(ra, buf, off, 4096)) {
			memcpy(buf, img + off, 4096);
			direct++;
		}
		assert_memory_equal(buf, img + off, 4096);
	}
	/*
	 * the first read goes to librbd; then 64 KiB chunks to the end and
	 * the window past it: 508 + 256 KiB, not 127 requests
	 */
	assert_true(direct <= 1);
	assert_true(nreq <= 14);
	e2t_rbd_ra_free(ra);
	assert_int_equal(nwaited, nreq);
}

static void test_failed_not_served(void **state)
{
	struct rbd_ra *ra = e2t_rbd_ra_new(NULL, IMG_SIZE);
	unsigned char buf[4096];

	(void)state;
	e2t_rbd_ra_start(ra, 0, 65536);
	fail_next = 1;
	assert_int_equal(e2t_rbd_ra_take(ra, buf, 4096, 4096), 0);
	assert_int_equal(e2t_rbd_ra_take(ra, buf, 8192, 4096), 0);
	e2t_rbd_ra_free(ra);
	assert_int_equal(nwaited, nreq);
}

static void test_bounded_by_image(void **state)
{
	struct rbd_ra *ra = e2t_rbd_ra_new(NULL, IMG_SIZE);
	int i;

	(void)state;
	e2t_rbd_ra_start(ra, IMG_SIZE - 4096, 1 << 20);
	e2t_rbd_ra_start(ra, IMG_SIZE, 4096);
	e2t_rbd_ra_sequential(ra, IMG_SIZE - 4096, 4096);
	for (i = 0; i < nreq; i++)
		assert_true(reqs[i].off + reqs[i].len <= IMG_SIZE);
	served(ra, IMG_SIZE - 4096, 4096);
	e2t_rbd_ra_free(ra);
	/* NULL is no cache: nothing served, nothing asked */
	assert_int_equal(e2t_rbd_ra_take(NULL, img, 0, 1), 0);
	e2t_rbd_ra_start(NULL, 0, 4096);
	e2t_rbd_ra_drop_all(NULL);
	e2t_rbd_ra_free(NULL);
	assert_int_equal(nwaited, nreq);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_hint_served, setup),
		cmocka_unit_test_setup(test_dropped_not_served, setup),
		cmocka_unit_test_setup(test_sequential_few_requests, setup),
		cmocka_unit_test_setup(test_failed_not_served, setup),
		cmocka_unit_test_setup(test_bounded_by_image, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
