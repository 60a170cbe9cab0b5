// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_zero_read.c - --zero-fill's reading side: the free space read in
 * large pieces, many in flight, each checked for zeros at memory speed and
 * zeroed where it holds something (target_zero.c decides what is read and
 * how the zeros are made)
 *
 * zerofree reads one block per system call; here the pieces are 1 MiB and
 * up to 16 are in flight through io_uring, so the device always has work
 * queued.  Without io_uring, one piece after the other with readahead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target_ring.h"
#include "target_zero_int.h"

static unsigned char *slot_buf(struct zf_bufs *z, unsigned int i)
{
	return z->mem + (size_t)i * ZF_CHUNK;
}

/* The buffers and the ring, on the first range that is to be read. */
static errcode_t zf_read_setup(struct zf_bufs *z)
{
	void *mem;

	if (z->mem)
		return 0;
	if (posix_memalign(&mem, 4096, (ZF_DEPTH + 1) * (size_t)ZF_CHUNK))
		return ENOMEM;
	z->mem = mem;
	z->zeros = slot_buf(z, ZF_DEPTH);
	/* all of it: valgrind cannot see io_uring fill the buffers */
	memset(z->mem, 0, (ZF_DEPTH + 1) * (size_t)ZF_CHUNK);
#ifdef HAVE_LIBURING
	z->ring_init = io_uring_queue_init(ZF_DEPTH, &z->ring, 0) == 0;
	z->ring_ok = z->ring_init;
#endif
	return 0;
}

static int all_zero(const unsigned char *p, size_t n)
{
	/* the first byte zero and every byte equal to the one before */
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* All of [off, off + n) of the file into @buf; a short file is an error. */
static errcode_t read_full(int fd, unsigned char *buf, size_t n, off_t off)
{
	ssize_t r;

	while (n) {
		r = pread(fd, buf, n, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno;
		if (r == 0)
			return EIO;	/* past the end: the gates say never */
		buf += r;
		n -= r;
		off += r;
	}
	return 0;
}

/*
 * One piece read into @buf, [start, start + n) of the filesystem: the
 * units that hold something, run together, are zeroed (zf_zero_run():
 * the host's cheapest way).
 */
static errcode_t zero_chunk(struct target *t, struct zf_bufs *z,
			    const unsigned char *buf, uint64_t start, uint64_t n)
{
	uint64_t base = zf_file_base(t, z), pos = start, end = start + n;
	uint64_t run = 0, run_len = 0, next;
	errcode_t rc;

	while (pos < end) {
		/* the unit's end, on a multiple of ZF_UNIT of the file */
		next = (base + pos) / ZF_UNIT * ZF_UNIT + ZF_UNIT - base;
		if (next > end)
			next = end;
		if (all_zero(buf + (pos - start), next - pos)) {
			t->stats.zero_bytes += next - pos;
			if (run_len) {
				rc = zf_zero_run(t, z, run, run_len);
				if (rc)
					return rc;
				run_len = 0;
			}
		} else if (run_len) {
			run_len += next - pos;
		} else {
			run = pos;
			run_len = next - pos;
		}
		pos = next;
	}
	if (run_len)
		return zf_zero_run(t, z, run, run_len);
	return 0;
}

/*
 * Piece [start, start + n) into @buf, synchronously: direct on a block
 * device, buffered where the device refuses the alignment (from then on).
 */
static errcode_t read_piece(struct target *t, struct zf_bufs *z,
			    unsigned char *buf, uint64_t start, uint64_t n)
{
	off_t off = (off_t)(t->base_bytes + start);
	errcode_t rc = EINVAL;

	if (z->rfd >= 0)
		return read_full(z->rfd, buf, n,
				 (off_t)(zf_file_base(t, z) + start));
	if (z->dfd >= 0)
		rc = read_full(z->dfd, buf, n, off);
	if (rc == EINVAL && z->dfd >= 0) {
		close(z->dfd);
		z->dfd = -1;
	}
	if (rc == EINVAL)
		rc = read_full(t->fd, buf, n, off);
	return rc;
}

/* A piece read whole: zeros where it is not zero, then count it. */
static errcode_t piece_done(struct target *t, struct zf_bufs *z,
			    const unsigned char *buf, uint64_t start, uint64_t n)
{
	errcode_t rc = zero_chunk(t, z, buf, start, n);

	if (rc)
		return rc;
	t->stats.bytes += n;
	target_progress(t);
	return 0;
}

/*
 * The piece from @pos: up to the next multiple of ZF_CHUNK of the file,
 * so that no host block is split between two pieces (each would zero its
 * part, leaving a written block of zeros where one hole would do).
 */
static uint64_t piece_len(const struct target *t, const struct zf_bufs *z,
			  uint64_t pos, uint64_t end)
{
	uint64_t base = zf_file_base(t, z);
	uint64_t next = ((base + pos) / ZF_CHUNK + 1) * ZF_CHUNK - base;

	return (next < end ? next : end) - pos;
}

/* Without a ring: one piece after the other, the kernel reading ahead. */
static errcode_t zero_fill_sync(struct target *t, struct zf_bufs *z, uint64_t pos,
				uint64_t end)
{
	uint64_t n, ahead;
	errcode_t rc;

	while (pos < end) {
		if (target_stopped(t))
			return E2TRIM_ERR_INTERRUPTED;
		n = piece_len(t, z, pos, end);
		ahead = end - pos - n < ZF_AHEAD ? end - pos - n : ZF_AHEAD;
		if (ahead && (z->rfd >= 0 || z->dfd < 0))
			posix_fadvise(z->rfd >= 0 ? z->rfd : t->fd,
				      (off_t)(zf_file_base(t, z) + pos + n),
				      (off_t)ahead, POSIX_FADV_WILLNEED);
		rc = read_piece(t, z, slot_buf(z, 0), pos, n);
		if (rc)
			return zf_fail(t, pos, rc);
		rc = piece_done(t, z, slot_buf(z, 0), pos, n);
		if (rc)
			return rc;
		pos += n;
	}
	return 0;
}

#ifdef HAVE_LIBURING
static void zq_reap(struct target *t, struct zf_bufs *z, int wait);

/* Every piece in flight, done. */
static void zq_drain(struct target *t, struct zf_bufs *z)
{
	while (z->ring_init && z->nfree < ZF_DEPTH && !z->broken)
		zq_reap(t, z, 1);
}

/*
 * Pieces the ring has read: each is checked and zeroed where it must be
 * (in the order they complete: no two overlap), its slot freed.  A piece
 * the ring did not return whole is read again synchronously.  Once a
 * piece failed, the others are only reaped.  With @wait, wait for one.
 */
struct zq_ctx {
	struct target *t;
	struct zf_bufs *z;
};

static void zq_done(void *priv, uint64_t i, int res)
{
	struct zq_ctx *c = priv;
	struct target *t = c->t;
	struct zf_bufs *z = c->z;
	errcode_t rc = 0;

	if (i >= ZF_DEPTH)
		return;
	z->free[z->nfree++] = i;
	if (t->error)
		return;
	if (res < 0 || (uint64_t)res != z->slot[i].len)
		rc = read_piece(t, z, slot_buf(z, i), z->slot[i].start,
				z->slot[i].len);
	if (rc)
		zf_fail(t, z->slot[i].start, rc);
	else
		piece_done(t, z, slot_buf(z, i), z->slot[i].start,
			   z->slot[i].len);
}

static void zq_reap(struct target *t, struct zf_bufs *z, int wait)
{
	struct zq_ctx c = { t, z };
	errcode_t rc = ring_reap(&z->ring, wait && !z->broken, zq_done, &c);

	if (rc) {
		/* the pieces in flight cannot be accounted for */
		z->broken = 1;
		zf_fail(t, 0, rc);
	}
}

/* Queue one piece; if the ring will not take it, read it here. */
static errcode_t zq_queue(struct target *t, struct zf_bufs *z, uint64_t start,
			  uint64_t n)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&z->ring);
	unsigned int i = z->free[--z->nfree];
	errcode_t rc;
	int n_in;

	z->slot[i].start = start;
	z->slot[i].len = n;
	/* never NULL: at most ZF_DEPTH entries, each submitted at once */
	if (z->rfd >= 0)
		io_uring_prep_read(sqe, z->rfd, slot_buf(z, i), n,
				   zf_file_base(t, z) + start);
	else
		io_uring_prep_read(sqe, z->dfd >= 0 ? z->dfd : t->fd,
				   slot_buf(z, i), n, t->base_bytes + start);
	sqe->user_data = i;
	do
		n_in = io_uring_submit(&z->ring);
	while (n_in == -EINTR);
	if (n_in > 0)
		return 0;
	/* not consumed: withdraw it, and read without the ring from now */
	io_uring_prep_nop(sqe);
	sqe->user_data = ZF_WITHDRAWN;
	z->free[z->nfree++] = i;
	z->ring_ok = 0;
	rc = read_piece(t, z, slot_buf(z, i), start, n);
	if (rc)
		return zf_fail(t, start, rc);
	return piece_done(t, z, slot_buf(z, i), start, n);
}

static errcode_t zero_fill_ring(struct target *t, struct zf_bufs *z, uint64_t pos,
				uint64_t end)
{
	uint64_t n;

	while (pos < end && z->ring_ok) {
		if (target_stopped(t))
			return E2TRIM_ERR_INTERRUPTED;
		if (t->error)
			return t->error;
		if (z->nfree == 0) {
			zq_reap(t, z, 1);
			if (z->broken)
				return t->error;
			continue;
		}
		n = piece_len(t, z, pos, end);
		if (zq_queue(t, z, pos, n))
			return t->error;
		pos += n;
		zq_reap(t, z, 0);
	}
	if (t->error || pos == end)
		return t->error;
	/* the ring failed: the synchronous path reuses slot 0's buffer */
	zq_drain(t, z);
	return t->error ? t->error : zero_fill_sync(t, z, pos, end);
}

#endif

/* Read [start, end) of the filesystem and zero what is not zero. */
errcode_t zf_read(struct target *t, struct zf_bufs *z, uint64_t start,
		    uint64_t end)
{
	errcode_t rc;

	if (start >= end)
		return t->error;
	rc = zf_read_setup(z);
	if (rc)
		return zf_fail(t, start, rc);
#ifdef HAVE_LIBURING
	if (z->ring_ok)
		return zero_fill_ring(t, z, start, end);
#endif
	return zero_fill_sync(t, z, start, end);
}

/* Every piece in flight, done. */
void zf_read_drain(struct target *t, struct zf_bufs *z)
{
#ifdef HAVE_LIBURING
	zq_drain(t, z);
#else
	(void)t;
	(void)z;
#endif
}

/* The ring and the buffers, once nothing is in flight. */
void zf_read_free(struct target *t, struct zf_bufs *z)
{
	zf_read_drain(t, z);
#ifdef HAVE_LIBURING
	/* after a failed wait: tear down, which waits for what is left */
	if (z->ring_init)
		io_uring_queue_exit(&z->ring);
#endif
	free(z->mem);
	z->mem = NULL;
}
