// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_target.c - target_trim() and friends over fake back ends
 *
 * A fake target records every request it is given and fails the one it
 * is told to (EIO, EOPNOTSUPP, EINTR, EINVAL, or a "short" completion: a
 * positive result, which for a discard can only mean that not all of it
 * was done).  The synchronous fake answers each request at once; the
 * asynchronous one keeps up to FAKE_DEPTH in flight and answers the
 * oldest when it needs a slot, or in finish(), as io_uring does.  What
 * the tests hold target.c to:
 *  - the first failure is the one reported (t->error, t->error_start);
 *  - stats count exactly the requests that completed successfully, so a
 *    partial report is honest;
 *  - requests a server was handed and then lost (target_unconfirmed())
 *    are counted apart from those, with their bytes and lowest start;
 *  - nothing is issued once a failure is seen, or once the stop flag is set;
 *  - every request is aligned to the granularity (from align_offset) and
 *    no larger than max_bytes, also where an extent is split;
 *  - holes are skipped, and every byte of an extent is accounted for:
 *    trimmed, already sparse, or kept back for alignment.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "target.h"

static volatile sig_atomic_t test_stop;


#define K 1024ULL
#define M (1024ULL * K)
#define MAX_REQ 256
#define FAKE_DEPTH 3
#define SHORT 2048		/* a "short" completion: bytes done */

struct fake {
	struct target t;
	/* every request issued, in order */
	unsigned int nreq;
	uint64_t start[MAX_REQ], len[MAX_REQ];
	/* fault injection: request number fail_at (from 1) gets fail_res */
	unsigned int fail_at;
	int fail_res;
	unsigned int stop_after;	/* set the stop flag after this one */
	/* what the fake itself saw succeed */
	uint64_t ok_requests, ok_bytes;
	/* asynchronous: requests done + 1 .. nreq are in flight */
	unsigned int done;
	/*
	 * the connection lost once request lost_from (from 1) is the oldest
	 * in flight: all in flight fail at once, newest first, as libnbd
	 * fails its commands (0: never)
	 */
	unsigned int lost_from;
	int error_seen;			/* submit/finish returned an error */
	/* data ranges [a, b) of the image; NULL: no next_data */
	const uint64_t (*data)[2];
	size_t ndata;
};

static int result_of(struct fake *f, unsigned int n)
{
	return n == f->fail_at ? f->fail_res : 0;
}

/* Record one request and check it against the limits. */
static void record(struct fake *f, uint64_t start, uint64_t len)
{
	const struct target_limits *lim = &f->t.lim;
	uint64_t g = lim->granularity, max = lim->max_bytes;

	assert_true(f->nreq < MAX_REQ);
	assert_true(len > 0);
	if (g > 1) {
		assert_int_equal((start + g - lim->align_offset % g) % g, 0);
		assert_int_equal(len % g, 0);
	}
	if (max)
		assert_true(len <= (max > g ? max : g));
	f->start[f->nreq] = start;
	f->len[f->nreq] = len;
	f->nreq++;
	if (f->stop_after && f->nreq == f->stop_after)
		test_stop = 1;
}

/* A back end's answer: the fault, as the kernel gives it, made errno. */
static errcode_t fake_request(struct target *t, uint64_t start, uint64_t len)
{
	struct fake *f = t->priv;
	int res;

	/* the synchronous path stops at the first failure */
	assert_int_equal(t->error, 0);
	record(f, start, len);
	res = result_of(f, f->nreq);
	if (res == 0) {
		f->ok_requests++;
		f->ok_bytes += len;
	}
	return target_kernel_res(res);
}

/* The oldest request in flight completes. */
static void complete_oldest(struct fake *f)
{
	unsigned int i = f->done++;
	int res = result_of(f, i + 1);

	if (res == 0) {
		f->ok_requests++;
		f->ok_bytes += f->len[i];
	}
	target_complete(&f->t, f->start[i], f->len[i], target_kernel_res(res));
}

/* The oldest request in flight completes, or the connection is lost. */
static void complete_next(struct fake *f)
{
	unsigned int i;

	if (!f->lost_from || f->done + 1 < f->lost_from) {
		complete_oldest(f);
		return;
	}
	for (i = f->nreq; i > f->done; i--)
		target_unconfirmed(&f->t, f->start[i - 1], f->len[i - 1],
				   ENOTCONN);
	f->done = f->nreq;
}

static errcode_t fake_submit(struct target *t, uint64_t start, uint64_t len)
{
	struct fake *f = t->priv;

	assert_false(f->error_seen);
	if (f->nreq - f->done == FAKE_DEPTH)
		complete_next(f);
	/* like io_uring's: a failure seen while waiting queues nothing */
	if (!t->error)
		record(f, start, len);
	if (t->error)
		f->error_seen = 1;
	return t->error;
}

static errcode_t fake_finish(struct target *t)
{
	struct fake *f = t->priv;

	while (f->done < f->nreq)
		complete_next(f);
	return t->error;
}

static errcode_t fake_next_data(struct target *t, uint64_t start,
				uint64_t end, uint64_t *ds, uint64_t *de)
{
	struct fake *f = t->priv;
	size_t i;

	for (i = 0; i < f->ndata; i++) {
		if (f->data[i][1] <= start)
			continue;
		if (f->data[i][0] >= end)
			break;
		*ds = f->data[i][0] > start ? f->data[i][0] : start;
		*de = f->data[i][1] < end ? f->data[i][1] : end;
		return 0;
	}
	*ds = *de = end;	/* a hole to the end */
	return 0;
}

/* Called where nothing may be issued at all. */
static errcode_t no_request(struct target *t, uint64_t start, uint64_t len)
{
	(void)t;
	(void)start;
	(void)len;
	fail_msg("a request was issued");
	return 0;
}

static const struct target_ops sync_ops = {
	.request = fake_request,
};
static const struct target_ops async_ops = {
	.submit = fake_submit,
	.finish = fake_finish,
};
static const struct target_ops hole_ops = {
	.request = fake_request,
	.next_data = fake_next_data,
};
static const struct target_ops forbidden_ops = {
	.request = no_request,
	.submit = no_request,
	.next_data = fake_next_data,
};

static void fake_init(struct fake *f, const struct target_ops *ops,
		      uint64_t gran, uint64_t off, uint64_t max)
{
	memset(f, 0, sizeof(*f));
	f->t.name = "fake";
	f->t.ops = ops;
	f->t.priv = f;
	f->t.lim.granularity = gran;
	f->t.lim.align_offset = off;
	f->t.lim.max_bytes = max;
	f->t.stop = &test_stop;
	test_stop = 0;
}

/* What the plan does: extent after extent until one fails, then finish. */
static errcode_t drive(struct fake *f, const uint64_t (*ext)[2], size_t n)
{
	errcode_t rc = 0, frc;
	size_t i;

	for (i = 0; i < n && !rc; i++)
		rc = target_trim(&f->t, ext[i][0], ext[i][1]);
	frc = target_finish(&f->t);
	return rc ? rc : frc;
}

/* Every byte of every extent: trimmed, already sparse, or kept back. */
static void assert_accounted(const struct fake *f, const uint64_t (*ext)[2],
			     size_t n)
{
	const struct target_stats *st = &f->t.stats;
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < n; i++)
		total += ext[i][1];
	assert_int_equal(st->bytes + st->sparse_bytes + st->align_bytes,
			 total);
}

static int teardown(void **state)
{
	(void)state;
	test_stop = 0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The plan the fault tests run: 4 KiB granularity, 64 KiB requests */

static const uint64_t plan[][2] = {
	{ 0, 16 * K },			/* request 1 */
	{ 32 * K, 160 * K },		/* 2, 3, 4: 64 + 64 + 32 KiB */
	{ 1 * M, 8 * K },		/* 5 */
	{ 2 * M + 512, 20 * K },	/* 6: [2M + 4K, 2M + 20K) */
	{ 3 * M, 4 * K },		/* 7 */
};
#define PLAN_N (sizeof(plan) / sizeof(plan[0]))

static const uint64_t plan_req[][2] = {
	{ 0, 16 * K }, { 32 * K, 64 * K }, { 96 * K, 64 * K },
	{ 160 * K, 32 * K }, { 1 * M, 8 * K }, { 2 * M + 4 * K, 16 * K },
	{ 3 * M, 4 * K },
};
#define PLAN_REQS (sizeof(plan_req) / sizeof(plan_req[0]))

static void assert_issued_as_planned(const struct fake *f)
{
	unsigned int i;

	assert_true(f->nreq <= PLAN_REQS);
	for (i = 0; i < f->nreq; i++) {
		assert_int_equal(f->start[i], plan_req[i][0]);
		assert_int_equal(f->len[i], plan_req[i][1]);
	}
}

static void test_sync_all_succeed(void **state)
{
	struct fake f;

	(void)state;
	fake_init(&f, &sync_ops, 4 * K, 0, 64 * K);
	assert_int_equal(drive(&f, plan, PLAN_N), 0);
	assert_int_equal(f.nreq, PLAN_REQS);
	assert_issued_as_planned(&f);
	assert_int_equal(f.t.error, 0);
	assert_int_equal(f.t.stats.requests, PLAN_REQS);
	assert_int_equal(f.t.stats.bytes, 16 * K + 160 * K + 8 * K + 16 * K +
			 4 * K);
	assert_int_equal(f.t.stats.align_bytes, 4 * K);
	assert_int_equal(f.t.stats.align_extents, 0);
	assert_accounted(&f, plan, PLAN_N);
}

static void test_async_all_succeed(void **state)
{
	struct fake f;

	(void)state;
	fake_init(&f, &async_ops, 4 * K, 0, 64 * K);
	assert_int_equal(drive(&f, plan, PLAN_N), 0);
	assert_int_equal(f.nreq, PLAN_REQS);
	assert_int_equal(f.done, PLAN_REQS);
	assert_issued_as_planned(&f);
	assert_int_equal(f.t.stats.requests, PLAN_REQS);
	assert_int_equal(f.t.stats.bytes, f.ok_bytes);
	assert_accounted(&f, plan, PLAN_N);
}

static const int faults[] = { -EIO, -EOPNOTSUPP, -EINTR, -EINVAL, SHORT };
/* the first request, one in the middle of a split extent, the last */
static const unsigned int fault_at[] = { 1, 3, PLAN_REQS };

static void test_sync_faults(void **state)
{
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		for (j = 0; j < sizeof(fault_at) / sizeof(fault_at[0]); j++) {
			errcode_t want = faults[i] < 0 ? -faults[i] : EIO;
			unsigned int at = fault_at[j], k;
			uint64_t bytes = 0;
			struct fake f;

			fake_init(&f, &sync_ops, 4 * K, 0, 64 * K);
			f.fail_at = at;
			f.fail_res = faults[i];
			assert_int_equal(drive(&f, plan, PLAN_N), want);
			assert_int_equal(f.t.error, want);
			assert_int_equal(f.t.error_start, plan_req[at - 1][0]);
			/* the failed request was the last one issued */
			assert_int_equal(f.nreq, at);
			assert_issued_as_planned(&f);
			/* exactly the requests before it were done */
			for (k = 0; k + 1 < at; k++)
				bytes += plan_req[k][1];
			assert_int_equal(f.t.stats.requests, at - 1);
			assert_int_equal(f.t.stats.bytes, bytes);
			assert_int_equal(f.ok_bytes, bytes);
		}
	}
}

static void test_async_faults(void **state)
{
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		for (j = 0; j < sizeof(fault_at) / sizeof(fault_at[0]); j++) {
			errcode_t want = faults[i] < 0 ? -faults[i] : EIO;
			unsigned int at = fault_at[j], issued;
			struct fake f;

			fake_init(&f, &async_ops, 4 * K, 0, 64 * K);
			f.fail_at = at;
			f.fail_res = faults[i];
			assert_int_equal(drive(&f, plan, PLAN_N), want);
			assert_int_equal(target_finish(&f.t), want);
			assert_int_equal(f.t.error, want);
			assert_int_equal(f.t.error_start, plan_req[at - 1][0]);
			/*
			 * The failure shows when its request completes: when
			 * a slot is needed FAKE_DEPTH requests later, or in
			 * finish().  Those already in flight still complete.
			 */
			issued = at + FAKE_DEPTH - 1;
			if (issued > PLAN_REQS)
				issued = PLAN_REQS;
			assert_int_equal(f.nreq, issued);
			assert_int_equal(f.done, issued);
			assert_issued_as_planned(&f);
			assert_int_equal(f.t.stats.requests, issued - 1);
			assert_int_equal(f.t.stats.requests, f.ok_requests);
			assert_int_equal(f.t.stats.bytes, f.ok_bytes);
		}
	}
}

/* Two failures: the first one is the one reported. */
static void test_complete_first_error_wins(void **state)
{
	struct fake f;

	(void)state;
	fake_init(&f, &sync_ops, 1, 0, 0);
	target_complete(&f.t, 4096, 4096, 0);
	target_complete(&f.t, 8192, 4096, EINVAL);
	target_complete(&f.t, 12288, 4096, EIO);
	target_complete(&f.t, 16384, 4096, 0);
	assert_int_equal(f.t.error, EINVAL);
	assert_int_equal(f.t.error_start, 8192);
	assert_int_equal(f.t.stats.requests, 2);
	assert_int_equal(f.t.stats.bytes, 8192);

	fake_init(&f, &sync_ops, 1, 0, 0);
	target_complete(&f.t, 4096, 4096, target_kernel_res(SHORT));
	assert_int_equal(f.t.error, EIO);
	assert_int_equal(f.t.stats.requests, 0);
	assert_int_equal(f.t.stats.bytes, 0);
}

/*
 * The connection lost with requests 3, 4 and 5 in flight: they are
 * unconfirmed (the server may have carried them out), counted apart from
 * the two done, from the lowest start among them although the newest
 * failed first; t->error is that first failure, kept; nothing more goes.
 */
static void test_async_unconfirmed(void **state)
{
	struct fake f;

	(void)state;
	fake_init(&f, &async_ops, 4 * K, 0, 64 * K);
	f.lost_from = 3;
	assert_int_equal(drive(&f, plan, PLAN_N), ENOTCONN);
	assert_int_equal(f.nreq, 2 + FAKE_DEPTH);
	assert_int_equal(f.done, f.nreq);
	assert_issued_as_planned(&f);
	assert_int_equal(f.t.stats.requests, 2);
	assert_int_equal(f.t.stats.bytes, 16 * K + 64 * K);
	assert_int_equal(f.t.stats.bytes, f.ok_bytes);
	assert_int_equal(f.t.stats.unconfirmed, 3);
	assert_int_equal(f.t.stats.unconfirmed_bytes, 64 * K + 32 * K + 8 * K);
	assert_int_equal(f.t.stats.unconfirmed_start, 96 * K);
	assert_int_equal(f.t.error, ENOTCONN);
	assert_int_equal(f.t.error_start, 1 * M);

	/* no errno given is still a failure; a later one changes no error */
	fake_init(&f, &sync_ops, 1, 0, 0);
	target_unconfirmed(&f.t, 8192, 4096, 0);
	target_unconfirmed(&f.t, 4096, 1024, ETIMEDOUT);
	target_unconfirmed(&f.t, 12288, 4096, ENOTCONN);
	target_complete(&f.t, 0, 4096, 0);
	assert_int_equal(f.t.error, EIO);
	assert_int_equal(f.t.error_start, 8192);
	assert_int_equal(f.t.stats.unconfirmed, 3);
	assert_int_equal(f.t.stats.unconfirmed_bytes, 9216);
	assert_int_equal(f.t.stats.unconfirmed_start, 4096);
	assert_int_equal(f.t.stats.requests, 1);
	assert_int_equal(f.t.stats.bytes, 4096);
}

/* ------------------------------------------------------------------ */
/* Alignment and splitting */

static void test_align_inward(void **state)
{
	static const uint64_t ext[][2] = {
		{ 1000, 10000 },	/* [4096, 8192) */
		{ 16 * K, 8 * K },	/* aligned already */
		{ 40 * K + 1, 4 * K },	/* no whole unit inside */
		{ 64 * K, 100 },	/* smaller than the granularity */
		{ 80 * K - 100, 4 * K + 200 },	/* [80K, 84K) */
	};
	struct fake f;

	(void)state;
	fake_init(&f, &sync_ops, 4 * K, 0, 0);
	assert_int_equal(drive(&f, ext, 5), 0);
	assert_int_equal(f.nreq, 3);
	assert_int_equal(f.start[0], 4096);
	assert_int_equal(f.len[0], 4096);
	assert_int_equal(f.start[1], 16 * K);
	assert_int_equal(f.len[1], 8 * K);
	assert_int_equal(f.start[2], 80 * K);
	assert_int_equal(f.len[2], 4 * K);
	assert_int_equal(f.t.stats.align_extents, 2);
	assert_int_equal(f.t.stats.align_bytes,
			 (10000 - 4096) + 4 * K + 100 + 200);
	assert_accounted(&f, ext, 5);
}

/* Boundaries at align_offset + k * granularity (a partition's offset). */
static void test_align_offset(void **state)
{
	static const uint64_t ext[][2] = {
		{ 0, 64 * K },		/* [1K, 61K) */
		{ 100 * K, 3 * K },	/* [100K, 103K) holds no [1K + 4nK, ..) */
		{ 0, 512 },		/* ends before the first boundary */
	};
	struct fake f;

	(void)state;
	fake_init(&f, &sync_ops, 4 * K, 1 * K, 0);
	assert_int_equal(drive(&f, ext, 3), 0);
	assert_int_equal(f.nreq, 1);
	assert_int_equal(f.start[0], 1 * K);
	assert_int_equal(f.len[0], 60 * K);
	assert_int_equal(f.t.stats.align_extents, 2);
	assert_accounted(&f, ext, 3);

	/* an offset of a whole granularity or more is the same boundary */
	fake_init(&f, &sync_ops, 4 * K, 9 * K, 0);
	assert_int_equal(drive(&f, ext, 1), 0);
	assert_int_equal(f.nreq, 1);
	assert_int_equal(f.start[0], 1 * K);
	assert_int_equal(f.len[0], 60 * K);
}

static void test_split_max_bytes(void **state)
{
	static const uint64_t ext[][2] = { { 1 * K, 40 * K } };
	struct fake f;
	unsigned int i;

	(void)state;
	/* 10000 is not a multiple of 4 KiB: splits fall every 8 KiB */
	fake_init(&f, &sync_ops, 4 * K, 1 * K, 10000);
	assert_int_equal(drive(&f, ext, 1), 0);
	assert_int_equal(f.nreq, 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(f.start[i], 1 * K + i * 8 * K);
		assert_int_equal(f.len[i], 8 * K);
	}
	assert_int_equal(f.t.stats.bytes, 40 * K);

	/* exact multiples, and a short last piece */
	fake_init(&f, &sync_ops, 4 * K, 0, 12 * K);
	{
		static const uint64_t e2[][2] = { { 0, 40 * K } };

		assert_int_equal(drive(&f, e2, 1), 0);
	}
	assert_int_equal(f.nreq, 4);
	assert_int_equal(f.len[3], 4 * K);
	assert_int_equal(f.start[3], 36 * K);

	/* no granularity: split anywhere */
	fake_init(&f, &sync_ops, 1, 0, 1000);
	{
		static const uint64_t e3[][2] = { { 7, 2500 } };

		assert_int_equal(drive(&f, e3, 1), 0);
	}
	assert_int_equal(f.nreq, 3);
	assert_int_equal(f.start[2], 2007);
	assert_int_equal(f.len[2], 500);
}

/*
 * A maximum below the granularity cannot be honoured by any aligned
 * request: take one granularity at a time, never "no limit".
 */
static void test_split_max_below_granularity(void **state)
{
	static const uint64_t ext[][2] = { { 0, 16 * K } };
	struct fake f;
	unsigned int i;

	(void)state;
	fake_init(&f, &sync_ops, 4 * K, 0, 1 * K);
	assert_int_equal(drive(&f, ext, 1), 0);
	assert_int_equal(f.nreq, 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(f.len[i], 4 * K);
}

/* ------------------------------------------------------------------ */
/* Holes, dry run, signals */

static void test_holes_skipped(void **state)
{
	static const uint64_t data[][2] = {
		{ 64 * K, 128 * K },
		{ 200 * K, 300 * K },
		{ 900 * K, 2 * M },		/* runs past the extent */
	};
	static const uint64_t ext[][2] = {
		{ 0, 32 * K },			/* all hole */
		{ 96 * K, 1 * M - 96 * K },	/* [96K, 1M) */
	};
	struct fake f;

	(void)state;
	fake_init(&f, &hole_ops, 4 * K, 0, 64 * K);
	f.data = data;
	f.ndata = 3;
	assert_int_equal(drive(&f, ext, 2), 0);
	/* [96K, 128K), [200K, 264K), [264K, 300K), [900K, 964K), [964K, 1M) */
	assert_int_equal(f.nreq, 5);
	assert_int_equal(f.start[0], 96 * K);
	assert_int_equal(f.len[0], 32 * K);
	assert_int_equal(f.start[1], 200 * K);
	assert_int_equal(f.len[1], 64 * K);
	assert_int_equal(f.start[2], 264 * K);
	assert_int_equal(f.len[2], 36 * K);
	assert_int_equal(f.start[3], 900 * K);
	assert_int_equal(f.start[4], 964 * K);
	assert_int_equal(f.len[4], 60 * K);
	assert_int_equal(f.t.stats.bytes, 32 * K + 100 * K + 124 * K);
	assert_int_equal(f.t.stats.sparse_bytes,
			 32 * K + (200 - 128) * K + (900 - 300) * K);
	assert_int_equal(f.t.stats.align_bytes, 0);
	assert_accounted(&f, ext, 2);
}

/* Data ranges off the granularity (a host with finer SEEK_DATA). */
static void test_holes_unaligned_data(void **state)
{
	static const uint64_t data[][2] = {
		{ 10 * K, 11 * K },		/* no whole unit */
		{ 18 * K, 30 * K },		/* [20K, 28K) */
	};
	static const uint64_t ext[][2] = { { 0, 64 * K } };
	struct fake f;

	(void)state;
	fake_init(&f, &hole_ops, 4 * K, 0, 0);
	f.data = data;
	f.ndata = 2;
	assert_int_equal(drive(&f, ext, 1), 0);
	assert_int_equal(f.nreq, 1);
	assert_int_equal(f.start[0], 20 * K);
	assert_int_equal(f.len[0], 8 * K);
	assert_accounted(&f, ext, 1);
}

static void test_dry_run(void **state)
{
	static const uint64_t data[][2] = { { 0, 4 * M } };
	struct fake f;

	(void)state;
	fake_init(&f, &forbidden_ops, 4 * K, 0, 64 * K);
	f.t.dryrun = 1;
	f.data = data;
	f.ndata = 1;
	assert_int_equal(drive(&f, plan, PLAN_N), 0);
	assert_int_equal(f.t.stats.requests, PLAN_REQS);
	assert_int_equal(f.t.stats.bytes, 16 * K + 160 * K + 8 * K + 16 * K +
			 4 * K);
	assert_int_equal(f.t.stats.align_bytes, 4 * K);
	assert_int_equal(f.t.error, 0);
	assert_accounted(&f, plan, PLAN_N);
}

static void test_stop_sync(void **state)
{
	struct fake f;

	(void)state;
	fake_init(&f, &sync_ops, 4 * K, 0, 64 * K);
	f.stop_after = 3;	/* in the middle of the second extent */
	assert_int_equal(drive(&f, plan, PLAN_N), E2TRIM_ERR_INTERRUPTED);
	assert_int_equal(f.nreq, 3);
	assert_int_equal(f.t.error, 0);
	assert_int_equal(f.t.stats.requests, 3);
	assert_int_equal(f.t.stats.bytes, 16 * K + 128 * K);
	/* and every later extent is refused at once */
	assert_int_equal(target_trim(&f.t, 8 * M, 64 * K),
			 E2TRIM_ERR_INTERRUPTED);
	assert_int_equal(f.nreq, 3);
}

static void test_stop_async(void **state)
{
	struct fake f;

	(void)state;
	fake_init(&f, &async_ops, 4 * K, 0, 64 * K);
	f.stop_after = 5;
	assert_int_equal(drive(&f, plan, PLAN_N), E2TRIM_ERR_INTERRUPTED);
	/* what was in flight completed, and counts */
	assert_int_equal(f.nreq, 5);
	assert_int_equal(f.done, 5);
	assert_int_equal(f.t.stats.requests, 5);
	assert_int_equal(f.t.stats.bytes, f.ok_bytes);
	assert_int_equal(f.t.error, 0);
}

static void test_stop_before_start(void **state)
{
	struct fake f;

	(void)state;
	fake_init(&f, &forbidden_ops, 4 * K, 0, 0);
	test_stop = 1;
	assert_int_equal(target_trim(&f.t, 0, 1 * M), E2TRIM_ERR_INTERRUPTED);
	assert_int_equal(f.t.stats.requests, 0);
	assert_int_equal(f.t.stats.align_bytes, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_sync_all_succeed, teardown),
		cmocka_unit_test_teardown(test_async_all_succeed, teardown),
		cmocka_unit_test_teardown(test_sync_faults, teardown),
		cmocka_unit_test_teardown(test_async_faults, teardown),
		cmocka_unit_test_teardown(test_complete_first_error_wins,
					  teardown),
		cmocka_unit_test_teardown(test_async_unconfirmed, teardown),
		cmocka_unit_test_teardown(test_align_inward, teardown),
		cmocka_unit_test_teardown(test_align_offset, teardown),
		cmocka_unit_test_teardown(test_split_max_bytes, teardown),
		cmocka_unit_test_teardown(test_split_max_below_granularity,
					  teardown),
		cmocka_unit_test_teardown(test_holes_skipped, teardown),
		cmocka_unit_test_teardown(test_holes_unaligned_data, teardown),
		cmocka_unit_test_teardown(test_dry_run, teardown),
		cmocka_unit_test_teardown(test_stop_sync, teardown),
		cmocka_unit_test_teardown(test_stop_async, teardown),
		cmocka_unit_test_teardown(test_stop_before_start, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
