// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_uring.c - discards on a block device, many in flight at once
 *
 * A BLKDISCARD ioctl waits for its request to finish before the next can
 * start, so on a heavily fragmented filesystem e2trim would spend its time
 * in round trips (about 85 us each through a loop device, against 15 us
 * of real work).  Since Linux 6.12 a block device takes discards through
 * io_uring (BLOCK_URING_CMD_DISCARD); with 32 of them in flight the device
 * is never idle.  The first request goes alone: if the kernel does not
 * know the command, it and everything after it go through the ioctl.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "target_ring.h"
#include "target_uring.h"

#ifdef HAVE_LIBURING
#include <liburing.h>

#ifndef BLOCK_URING_CMD_DISCARD
#define BLOCK_URING_CMD_DISCARD _IO(0x12, 0)	/* <linux/fs.h>, 6.12 */
#endif

/*
 * The block layer's discard command (Linux 6.12): IORING_OP_URING_CMD,
 * cmd_op (bytes 8-11 of the 64-byte entry), the range's start in addr,
 * its length in addr3 (bytes 48-55).  liburing before 2.2 (Debian 11:
 * 0.7) names neither; the entry's layout is the kernel's ABI, so those
 * bytes are written where they are (HAVE_URING_CMD: the Makefile).
 */
static void uring_prep_discard(struct io_uring_sqe *sqe, int fd,
			       uint64_t start, uint64_t len)
{
#ifdef HAVE_URING_CMD
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = BLOCK_URING_CMD_DISCARD;
	sqe->addr3 = len;
#else
	uint32_t op = BLOCK_URING_CMD_DISCARD;

	io_uring_prep_rw(46 /* IORING_OP_URING_CMD */, sqe, fd, NULL, 0, 0);
	memcpy((char *)sqe + 8, &op, sizeof(op));
	memcpy((char *)sqe + 48, &len, sizeof(len));
#endif
	sqe->addr = start;
}

#define URING_DEPTH 32
#define URING_WITHDRAWN URING_DEPTH	/* user_data of no request */

struct uring_state {
	struct io_uring ring;
	struct {
		uint64_t start, len;
	} slot[URING_DEPTH];
	unsigned int free[URING_DEPTH];	/* stack of unused slots */
	unsigned int nfree;
	int proven;			/* the kernel did one this way */
	int broken;			/* a submit or wait failed */
	const struct target_ops *sync_ops;
};

static void uring_reap(struct target *t, struct uring_state *u, int wait);

/*
 * Hand the queued entry to the kernel.  io_uring_enter() consumes it or
 * fails without consuming it: -EINTR is retried, -EAGAIN/-EBUSY (the
 * kernel is short of resources, or completions wait to be reaped) after
 * reaping one.  Any other failure leaves the entry unsubmitted: it must
 * not be counted as in flight, or finish() would wait for it forever.
 */
static errcode_t uring_push(struct target *t, struct uring_state *u)
{
	int rc, tries = 0;

	for (;;) {
		rc = io_uring_submit(&u->ring);
		if (rc > 0)
			return 0;
		if (rc == 0)
			return EIO;	/* nothing consumed, no reason given */
		if (rc == -EINTR)
			continue;
		if ((rc != -EAGAIN && rc != -EBUSY) || ++tries > 8)
			return target_kernel_res(rc);
		/* completions to make room for: reap one, then try again */
		if (u->nfree < URING_DEPTH - 1)
			uring_reap(t, u, 1);
	}
}

/*
 * Queue [start, start + len) in a free slot and submit it.  On failure
 * the slot is free again, the entry withdrawn and the request failed
 * (t->error), never counted.
 */
static errcode_t uring_queue(struct target *t, struct uring_state *u,
			     uint64_t start, uint64_t len)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	unsigned int i = u->free[--u->nfree];
	errcode_t rc;

	u->slot[i].start = start;
	u->slot[i].len = len;
	/* never NULL: at most URING_DEPTH entries, each submitted at once */
	uring_prep_discard(sqe, t->fd, t->base_bytes + start, len);
	sqe->user_data = i;
	rc = uring_push(t, u);
	if (!rc)
		return 0;
	/*
	 * Not consumed: turn the entry into a no-op that is never
	 * submitted (nothing submits once t->error is set, and the ring is
	 * torn down without another io_uring_enter()).
	 */
	io_uring_prep_nop(sqe);
	sqe->user_data = URING_WITHDRAWN;
	u->free[u->nfree++] = i;
	target_complete(t, start, len, rc);
	return rc;
}

/* Where the lowest request still in flight starts: the error's place. */
static uint64_t first_in_flight(const struct uring_state *u)
{
	int busy[URING_DEPTH];
	uint64_t first = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < URING_DEPTH; i++)
		busy[i] = 1;
	for (i = 0; i < u->nfree; i++)
		busy[u->free[i]] = 0;
	for (i = 0; i < URING_DEPTH; i++)
		if (busy[i] && u->slot[i].start < first)
			first = u->slot[i].start;
	return first == UINT64_MAX ? 0 : first;
}

/*
 * Account for finished requests; with @wait, wait for at least one.  A
 * wait that fails for another reason than a signal leaves the requests in
 * flight unaccounted: the ring is broken, the run fails, and finish()
 * stops waiting (those requests may still complete: their bytes are not
 * counted as trimmed).
 */
static void uring_done(void *priv, uint64_t i, int res)
{
	struct target *t = priv;
	struct uring_state *u = t->priv;

	if (i >= URING_DEPTH)
		return;
	target_complete(t, u->slot[i].start, u->slot[i].len,
			target_kernel_res(res));
	u->free[u->nfree++] = i;
}

static void uring_reap(struct target *t, struct uring_state *u, int wait)
{
	errcode_t rc = ring_reap(&u->ring, wait && !u->broken, uring_done, t);

	if (rc) {
		u->broken = 1;
		target_complete(t, first_in_flight(u), 0, rc);
	}
}

static void uring_close(struct target *t)
{
	struct uring_state *u = t->priv;

	if (!u)
		return;
	io_uring_queue_exit(&u->ring);
	free(u);
	t->priv = NULL;
}

/* The kernel cannot: from now on, the plain ioctl. */
static errcode_t fall_back(struct target *t, uint64_t start, uint64_t len)
{
	const struct target_ops *ops = ((struct uring_state *)t->priv)->sync_ops;

	uring_close(t);
	t->ops = ops;
	target_complete(t, start, len, ops->request(t, start, len));
	return t->error;
}

static errcode_t uring_submit(struct target *t, uint64_t start,
			      uint64_t len)
{
	struct uring_state *u = t->priv;
	struct io_uring_cqe *cqe;
	int res;

	if (!u->proven) {
		if (uring_queue(t, u, start, len))
			return t->error;
		do
			res = io_uring_wait_cqe(&u->ring, &cqe);
		while (res == -EINTR);
		if (res) {
			/* in flight, and no way to learn its fate */
			u->broken = 1;
			target_complete(t, start, len, target_kernel_res(res));
			return t->error;
		}
		res = cqe->res;
		io_uring_cqe_seen(&u->ring, cqe);
		u->free[u->nfree++] = cqe->user_data;
		/* unknown command, or no uring_cmd on block devices */
		if (res == -EOPNOTSUPP || res == -EINVAL || res == -ENOTTY)
			return fall_back(t, start, len);
		target_complete(t, start, len, target_kernel_res(res));
		u->proven = res == 0;
		return t->error;
	}
	if (u->nfree == 0)
		uring_reap(t, u, 1);
	if (!t->error)
		uring_queue(t, u, start, len);
	uring_reap(t, u, 0);
	return t->error;
}

static errcode_t uring_finish(struct target *t)
{
	struct uring_state *u = t->priv;

	while (u && u->nfree < URING_DEPTH && !u->broken)
		uring_reap(t, u, 1);
	return t->error;
}

static const struct target_ops uring_ops = {
	.submit = uring_submit,
	.finish = uring_finish,
	.close = uring_close,
};

errcode_t target_uring_init(struct target *t,
			    const struct target_ops *sync_ops)
{
	struct uring_state *u;
	unsigned int i;

	if (t->mode != TRIM_DISCARD)
		return EOPNOTSUPP;
	u = calloc(1, sizeof(*u));
	if (!u)
		return ENOMEM;
	if (io_uring_queue_init(URING_DEPTH, &u->ring, 0)) {
		free(u);
		return EOPNOTSUPP;	/* io_uring disabled: use the ioctl */
	}
	for (i = 0; i < URING_DEPTH; i++)
		u->free[u->nfree++] = i;
	u->sync_ops = sync_ops;
	t->priv = u;
	t->ops = &uring_ops;
	return 0;
}

#else /* !HAVE_LIBURING */

errcode_t target_uring_init(struct target *t,
			    const struct target_ops *sync_ops)
{
	(void)t;
	(void)sync_ops;
	return EOPNOTSUPP;
}

#endif
