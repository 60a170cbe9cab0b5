// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_nbd.c - discards through NBD: a VM image behind qemu-nbd, or any
 *                NBD server
 *
 * Four things decide what a trim frees in a VM image, and how fast:
 *  - qcow2 (and its kin) frees only whole clusters covered by one aligned
 *    request: sixteen 4 KiB trims over a 64 KiB cluster free nothing.  The
 *    granularity is the cluster (or the server's block size if larger),
 *    and the plan has merged extents across group edges already.
 *  - a trim over a range that is a hole already makes a qcow2 *grow*: qemu
 *    allocates L2 tables to record the discard.  So only what NBD block
 *    status (base:allocation) calls allocated is trimmed; holes are
 *    counted as already sparse, as SEEK_HOLE does for raw images.
 *  - in an overlay, base:allocation calls the backing file's clusters
 *    data as well, and a trim there only writes zero clusters into the
 *    overlay: it grows.  With qemu:allocation-depth (qemu-nbd -A) only
 *    what the top layer holds (depth 1) counts as data; the rest of the
 *    free space is counted as already sparse, since nothing of the image
 *    file can be freed there.
 *  - where the image's own store tells its data finer than block status
 *    (an RBD image: qemu says whole 4 MiB objects, rbd diff the exact
 *    extents), that map is asked instead (nbd_conn.h's data_map).
 *  - one request at a time over a socket is a round trip each; up to
 *    NBD_DEPTH trims are in flight (nbd_aio_trim), completions counted as
 *    they come.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include "nbd_dl.h"
#include "nbd_io.h"
#include "target_nbd.h"

#define NBD_DEPTH 64
/* NBD lengths are 32-bit; 1 GiB is a multiple of any cluster size */
#define NBD_MAX_REQUEST (1ULL << 30)

/*
 * The allocated segment block status found last, [ds, de) in export
 * bytes, and where that query began (q_start): [q_start, ds) is a hole.
 * As with SEEK_DATA on raw images, the plan asks in ascending order and
 * trims only behind the position asked for, so the answer stays true.
 */
struct nbd_state {
	struct nbd_conn *c;
	uint64_t q_start, ds, de;
	int valid;
};

struct nbd_req {
	struct target *t;
	uint64_t start, len;
};

/* libnbd's errno of the call that failed (EIO if it gave none) */
static errcode_t nbd_err(void)
{
	int e = nbd_get_errno();

	return e ? (errcode_t)e : EIO;
}

static errcode_t nbd_request(struct target *t, uint64_t start_bytes,
			     uint64_t len_bytes)
{
	struct nbd_state *st = t->priv;
	uint64_t off = t->base_bytes + start_bytes;
	int rc;

	if (t->mode == TRIM_ZEROOUT)
		rc = nbd_zero(st->c->h, len_bytes, off, 0);
	else
		rc = nbd_trim(st->c->h, len_bytes, off, 0);
	return rc == -1 ? nbd_err() : 0;
}

/*
 * A failed reply, or none (the connection lost: libnbd fails what was in
 * flight), is not known undone: the server may have carried it out.
 */
static int trim_done(void *user_data, int *error)
{
	struct nbd_req *r = user_data;

	if (*error)
		target_unconfirmed(r->t, r->start, r->len, (errcode_t)*error);
	else
		target_complete(r->t, r->start, r->len, 0);
	return 1;	/* retire the command: nothing more to ask of it */
}

/* Wait until fewer than @max requests are in flight. */
static errcode_t wait_below(struct target *t, unsigned int max)
{
	struct nbd_state *st = t->priv;

	while (nbd_aio_in_flight(st->c->h) >= (int)max) {
		if (nbd_poll(st->c->h, -1) == -1) {
			if (!t->error) {
				t->error = nbd_err();
				t->error_start = 0;
			}
			return t->error;
		}
	}
	return 0;
}

static errcode_t nbd_submit(struct target *t, uint64_t start_bytes,
			    uint64_t len_bytes)
{
	struct nbd_state *st = t->priv;
	uint64_t off = t->base_bytes + start_bytes;
	nbd_completion_callback cb = { .callback = trim_done, .free = free };
	struct nbd_req *r;
	int64_t cookie;

	if (wait_below(t, NBD_DEPTH))
		return t->error;
	r = malloc(sizeof(*r));
	if (!r) {
		target_complete(t, start_bytes, len_bytes, ENOMEM);
		return t->error;
	}
	*r = (struct nbd_req){ t, start_bytes, len_bytes };
	cb.user_data = r;
	if (t->mode == TRIM_ZEROOUT)
		cookie = nbd_aio_zero(st->c->h, len_bytes, off, cb, 0);
	else
		cookie = nbd_aio_trim(st->c->h, len_bytes, off, cb, 0);
	/* on failure libnbd has freed r already, through cb.free */
	if (cookie == -1)
		target_complete(t, start_bytes, len_bytes, nbd_err());
	return t->error;
}

/* Every trim done, then the server's caches written out. */
static errcode_t nbd_finish(struct target *t)
{
	struct nbd_state *st = t->priv;
	errcode_t rc;

	wait_below(t, 1);
	rc = e2t_nbd_conn_flush(st->c);
	if (rc && !t->error) {
		t->error = rc;
		t->error_start = 0;
	}
	return t->error;
}

/* The allocated segments one context's reply names, merged, in order. */
struct seg_list {
	uint64_t (*seg)[2];	/* [start, end) in export bytes */
	size_t n, cap;
	uint64_t covered;	/* how far the reply reached */
};

/* Block status from @pos: base:allocation's and the depth's answers. */
struct status_walk {
	struct seg_list base, depth;
	int failed;
};

static errcode_t seg_add(struct seg_list *l, uint64_t a, uint64_t b)
{
	void *p;

	if (l->n && l->seg[l->n - 1][1] == a) {
		l->seg[l->n - 1][1] = b;
		return 0;
	}
	if (l->n == l->cap) {
		p = realloc(l->seg, (l->cap ? l->cap * 2 : 64) *
			    sizeof(*l->seg));
		if (!p)
			return ENOMEM;
		l->seg = p;
		l->cap = l->cap ? l->cap * 2 : 64;
	}
	l->seg[l->n][0] = a;
	l->seg[l->n][1] = b;
	l->n++;
	return 0;
}

static int status_extent(void *user_data, const char *metacontext,
			 uint64_t offset, uint32_t *entries, size_t n,
			 int *error)
{
	struct status_walk *w = user_data;
	struct seg_list *l;
	uint64_t at = offset;
	int depth;
	size_t i;

	(void)error;
	depth = !strcmp(metacontext, NBD_CONTEXT_DEPTH);
	if (!depth && strcmp(metacontext, LIBNBD_CONTEXT_BASE_ALLOCATION))
		return 0;
	l = depth ? &w->depth : &w->base;
	for (i = 0; i + 1 < n; i += 2) {
		uint64_t len = entries[i];
		int data = depth ? entries[i + 1] == 1 :
				   !(entries[i + 1] & LIBNBD_STATE_HOLE);

		if (data && seg_add(l, at, at + len))
			w->failed = 1;
		at += len;
	}
	if (at > l->covered)
		l->covered = at;
	return 0;
}

/*
 * The first segment that both answers call data, below @reach, into
 * st->ds/de (grown over the next ones it touches); 0 when none.
 */
static int first_common(struct nbd_state *st, const struct seg_list *a,
			const struct seg_list *b, uint64_t reach)
{
	size_t i = 0, j = 0;
	uint64_t s, e;
	int found = 0;

	while (i < a->n && j < b->n) {
		s = a->seg[i][0] > b->seg[j][0] ? a->seg[i][0] : b->seg[j][0];
		e = a->seg[i][1] < b->seg[j][1] ? a->seg[i][1] : b->seg[j][1];
		if (e > reach)
			e = reach;
		if (s < e) {
			if (found && s != st->de)
				break;
			if (!found)
				st->ds = s;
			st->de = e;
			found = 1;
		}
		if (a->seg[i][1] < b->seg[j][1])
			i++;
		else
			j++;
	}
	return found;
}

/* Find the next allocated segment at or after @pos, before @lim. */
static errcode_t query_status(struct nbd_state *st, uint64_t pos,
			      uint64_t lim)
{
	struct status_walk w;
	nbd_extent_callback cb = { .callback = status_extent,
				   .user_data = &w };
	struct seg_list all = { 0 };
	uint64_t count, reach, span[1][2];
	errcode_t rc = 0;
	int found = 0;

	memset(&w, 0, sizeof(w));
	st->q_start = pos;
	while (!found && pos < lim) {
		count = lim - pos < NBD_MAX_REQUEST ? lim - pos :
						      NBD_MAX_REQUEST;
		w.base.n = w.depth.n = 0;
		w.base.covered = w.depth.covered = pos;
		if (nbd_block_status(st->c->h, count, pos, cb, 0) == -1) {
			rc = nbd_err();
			break;
		}
		if (w.failed) {
			rc = ENOMEM;
			break;
		}
		reach = w.base.covered;
		if (st->c->srv.has_depth && w.depth.covered < reach)
			reach = w.depth.covered;
		if (reach <= pos) {
			rc = EIO;	/* a reply that says nothing */
			break;
		}
		/* without the depth, all that base:allocation calls data */
		span[0][0] = pos;
		span[0][1] = reach;
		all.seg = span;
		all.n = 1;
		found = first_common(st, &w.base,
				     st->c->srv.has_depth ? &w.depth : &all, reach);
		pos = reach;
	}
	free(w.base.seg);
	free(w.depth.seg);
	if (rc)
		return rc;
	if (!found)
		st->ds = st->de = UINT64_MAX;	/* hole up to lim at least */
	st->valid = 1;
	return 0;
}

/*
 * The image's own map (nbd_conn.h's data_map): the first extent that
 * ends after @pos, before @lim, into st->ds/de; 0 when none.
 */
static int map_next(struct nbd_state *st, uint64_t pos, uint64_t lim)
{
	const uint64_t (*m)[2] = st->c->data_map;
	size_t lo = 0, hi = st->c->data_map_n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m[mid][1] <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == st->c->data_map_n || m[lo][0] >= lim)
		return 0;
	st->ds = m[lo][0];
	st->de = m[lo][1];
	return 1;
}

static errcode_t nbd_next_data(struct target *t, uint64_t start_bytes,
			       uint64_t end_bytes, uint64_t *data_start,
			       uint64_t *data_end)
{
	struct nbd_state *st = t->priv;
	uint64_t base = t->base_bytes, pos = base + start_bytes;
	uint64_t lim = base + end_bytes;
	errcode_t rc;

	if (st->c->has_data_map) {
		uint64_t g = t->lim.granularity, ds, de;

		if (!map_next(st, pos, lim)) {
			*data_start = *data_end = end_bytes;
			return 0;
		}
		/*
		 * Widened to the granularity's chunks: what a discard does not
		 * cover of a chunk is dropped, and the chunk's part that is a
		 * hole needs no care (unlike a qcow2's, trimming it costs
		 * nothing); the caller's range is whole chunks already.
		 */
		ds = st->ds - st->ds % g;
		de = st->de % g ? st->de + (g - st->de % g) : st->de;
		*data_start = (ds > pos ? ds : pos) - base;
		*data_end = (de < lim ? de : lim) - base;
		return 0;
	}

	if (!st->valid || pos < st->q_start || pos >= st->de) {
		/* look ahead far: one query answers many small extents */
		uint64_t look = st->c->srv.size_bytes;

		if (look < lim)
			look = lim;
		rc = query_status(st, pos, look);
		if (rc)
			return rc;
	}
	if (st->ds >= lim) {
		*data_start = *data_end = end_bytes;
		return 0;
	}
	*data_start = (st->ds > pos ? st->ds : pos) - base;
	*data_end = (st->de < lim ? st->de : lim) - base;
	return 0;
}

static void nbd_target_close(struct target *t)
{
	free(t->priv);
}

static const struct target_ops nbd_ops = {
	.request = nbd_request,
	.submit = nbd_submit,
	.finish = nbd_finish,
	.next_data = nbd_next_data,
	.close = nbd_target_close,
};

static const struct target_ops nbd_ops_no_status = {
	.request = nbd_request,
	.submit = nbd_submit,
	.finish = nbd_finish,
	.close = nbd_target_close,
};

errcode_t target_nbd_init(struct target *t, struct nbd_conn *c,
			  uint64_t cluster_bytes, enum trim_mode mode)
{
	struct nbd_state *st;
	uint64_t g = cluster_bytes;

	if (mode == TRIM_SECURE || mode == TRIM_ZERO_FILL)
		return EOPNOTSUPP;
	st = calloc(1, sizeof(*st));
	if (!st)
		return ENOMEM;
	st->c = c;
	t->priv = st;
	t->ops = c->srv.has_status || c->has_data_map ? &nbd_ops :
							 &nbd_ops_no_status;
	t->fd = -1;
	t->mode = mode;
	if (c->srv.min_block > g)
		g = c->srv.min_block;
	if (c->srv.pref_block > g)
		g = c->srv.pref_block;
	if (!g)
		g = 1;
	t->lim.granularity = g;
	/* clusters start at the image's offset 0, not the partition's */
	t->lim.align_offset = (g - t->base_bytes % g) % g;
	t->lim.max_bytes = NBD_MAX_REQUEST;
	return 0;
}
