// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_rbd.c - discards through librbd in the process: a Ceph RBD image
 *
 *  - librbd skips what a discard does not cover of each aligned
 *    rbd_discard_granularity_bytes chunk (64 KiB by default): that is the
 *    granularity, so that what is reported trimmed is freed.
 *  - where the image holds data comes from its own map (rbd diff's exact
 *    extents, taken at open): outside it there is nothing to free.
 *  - up to RBD_DEPTH discards are in flight (rbd_aio_discard); their
 *    completions are waited for in order, here, in the thread that
 *    counts them (librbd's callbacks run on its own threads).
 *  - before each new request the image is checked to be still ours, as
 *    it was: the exclusive lock held (lost if someone broke it with rbd
 *    lock rm, which blocklists e2trim, or if the OSD does not confirm
 *    it: a stalled cluster) and the size unchanged.
 *    The size is librbd's own state; the lock is asked of the OSD
 *    (librbd's lock.assert_locked, a round trip).  Otherwise the run stops
 *    with ENOLCK or ERANGE, nothing further sent.
 *  - a request that fails once sent is not known undone: an OSD that
 *    stopped answering still holds it and carries it out when it resumes
 *    (librados's op timeout only gives up waiting), and one request
 *    spans many objects.  It is counted as unconfirmed, not as untouched.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rbd_io.h"
#include "target_rbd.h"
#include "test_pause.h"

#define RBD_DEPTH 64
/* one request: 1 GiB, a multiple of any granularity librbd takes */
#define RBD_MAX_REQUEST (1ULL << 30)

struct rbd_req {
	void *comp;
	uint64_t start, len;
};

struct rbd_state {
	struct rbd_io *io;
	const uint64_t (*map)[2];
	size_t map_n;
	struct rbd_req q[RBD_DEPTH];	/* in flight, oldest at head */
	unsigned int head, n;
	unsigned int sent : 1;		/* a request has gone out */
};

/* The oldest request in flight done, counted. */
static void retire_one(struct target *t)
{
	struct rbd_state *st = t->priv;
	struct rbd_req *r = &st->q[st->head];
	errcode_t res = e2t_rbd_io_wait(r->comp);

	if (res)
		target_unconfirmed(t, r->start, r->len, res);
	else
		target_complete(t, r->start, r->len, 0);
	st->head = (st->head + 1) % RBD_DEPTH;
	st->n--;
}

static errcode_t start(struct target *t, uint64_t start_bytes,
		       uint64_t len_bytes, void **comp)
{
	struct rbd_state *st = t->priv;
	errcode_t err = e2t_rbd_io_recheck(st->io);

	if (err)
		return err;
	/*
	 * E2TRIM_TEST_PAUSE=rbd-request: held once, checked and not yet
	 * sent, so that a test can stop an OSD with a request on its way
	 */
	if (!st->sent) {
		st->sent = 1;
		test_pause_point("rbd-request", e2t_rbd_io_name(st->io));
	}
	return e2t_rbd_io_discard_start(st->io, t->base_bytes + start_bytes,
				    len_bytes, t->mode == TRIM_ZEROOUT, comp);
}

static errcode_t rbd_request(struct target *t, uint64_t start_bytes,
			     uint64_t len_bytes)
{
	void *comp;
	errcode_t err = start(t, start_bytes, len_bytes, &comp);

	if (err)
		return err;
	err = e2t_rbd_io_wait(comp);
	if (err)
		target_unconfirmed(t, start_bytes, len_bytes, err);
	return err;
}

static errcode_t rbd_submit(struct target *t, uint64_t start_bytes,
			    uint64_t len_bytes)
{
	struct rbd_state *st = t->priv;
	struct rbd_req *r;
	errcode_t err;

	if (st->n == RBD_DEPTH)
		retire_one(t);
	if (t->error)
		return t->error;
	r = &st->q[(st->head + st->n) % RBD_DEPTH];
	err = start(t, start_bytes, len_bytes, &r->comp);
	if (err) {
		target_complete(t, start_bytes, len_bytes, err);
		return t->error;
	}
	r->start = start_bytes;
	r->len = len_bytes;
	st->n++;
	return t->error;
}

/* Every discard done, then librbd's cache written out. */
static errcode_t rbd_finish(struct target *t)
{
	struct rbd_state *st = t->priv;
	errcode_t rc;

	while (st->n)
		retire_one(t);
	rc = e2t_rbd_io_flush(st->io);
	if (rc && !t->error) {
		t->error = rc;
		t->error_start = 0;
	}
	return t->error;
}

/* The first extent of the map that ends after @pos, as its index. */
static size_t map_find(const struct rbd_state *st, uint64_t pos)
{
	size_t lo = 0, hi = st->map_n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (st->map[mid][1] <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The map's next extent, widened to the granularity's chunks: what a
 * discard does not cover of a chunk is dropped, and the chunk's part that
 * is a hole costs nothing to trim; the caller's range is whole chunks.
 */
static errcode_t rbd_next_data(struct target *t, uint64_t start_bytes,
			       uint64_t end_bytes, uint64_t *data_start,
			       uint64_t *data_end)
{
	struct rbd_state *st = t->priv;
	uint64_t base = t->base_bytes, pos = base + start_bytes;
	uint64_t lim = base + end_bytes, g = t->lim.granularity, ds, de;
	size_t i = map_find(st, pos);

	if (i == st->map_n || st->map[i][0] >= lim) {
		*data_start = *data_end = end_bytes;
		return 0;
	}
	ds = st->map[i][0] - st->map[i][0] % g;
	de = st->map[i][1] % g ? st->map[i][1] + (g - st->map[i][1] % g) :
				  st->map[i][1];
	*data_start = (ds > pos ? ds : pos) - base;
	*data_end = (de < lim ? de : lim) - base;
	return 0;
}

static void rbd_target_close(struct target *t)
{
	struct rbd_state *st = t->priv;

	/* a run stopped early: what is in flight is waited for, counted */
	while (st->n)
		retire_one(t);
	free(st);
	t->priv = NULL;
}

static const struct target_ops rbd_ops = {
	.request = rbd_request,
	.submit = rbd_submit,
	.finish = rbd_finish,
	.next_data = rbd_next_data,
	.close = rbd_target_close,
};

static const struct target_ops rbd_ops_no_map = {
	.request = rbd_request,
	.submit = rbd_submit,
	.finish = rbd_finish,
	.close = rbd_target_close,
};

errcode_t target_rbd_init(struct target *t, struct rbd_io *io,
			  uint64_t granularity, const uint64_t (*map)[2],
			  size_t n, enum trim_mode mode)
{
	struct rbd_state *st;
	uint64_t g = granularity ? granularity : 1;

	if (mode == TRIM_SECURE || mode == TRIM_ZERO_FILL ||
	    (mode == TRIM_ZEROOUT && !e2t_rbd_io_can_zero()))
		return EOPNOTSUPP;
	st = calloc(1, sizeof(*st));
	if (!st)
		return ENOMEM;
	st->io = io;
	st->map = map;
	st->map_n = n;
	t->priv = st;
	t->ops = map ? &rbd_ops : &rbd_ops_no_map;
	t->fd = -1;
	t->mode = mode;
	t->lim.granularity = g;
	/* chunks start at the image's offset 0, not the partition's */
	t->lim.align_offset = (g - t->base_bytes % g) % g;
	t->lim.max_bytes = RBD_MAX_REQUEST;
	return 0;
}
