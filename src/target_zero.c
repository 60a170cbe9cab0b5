// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_zero.c - --zero-fill: zero the free space that is not zero
 *
 * zerofree's job, for storage that cannot discard and for images that are
 * compressed or made sparse afterwards (qemu-img convert -S, fallocate
 * --dig-holes): every free block ends up zero.  Zeroing everything would
 * allocate every hole of a sparse image and every unmapped block of a thin
 * volume, so holes are skipped (SEEK_DATA) and the rest is zeroed without
 * writing data where the host can: unwritten extents in a file, WRITE
 * ZEROES on a device.
 *
 * An image file (or a loop device's backing file) whose host zeroes a
 * range by marking it unwritten needs no reading at all: its data ranges
 * are zeroed that way as they are, which neither grows the file nor
 * writes a byte, and costs less than reading them would.  Everything else
 * is read first and only what is not zero is zeroed: a block device (a
 * thin volume would allocate what WRITE ZEROES touches), a host that
 * cannot zero ranges, and blocks shared with another file (reflinks),
 * which zeroing would unshare.  zerofree reads one block per system call;
 * here the reads are large and many are in flight, so the device always
 * has work queued, and the check for zeros runs at memory speed.  A loop
 * device is read through its backing file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#include "fiemap.h"
#include "sysfs.h"
#include "target.h"

#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

#define ZF_CHUNK	(1u << 20)	/* bytes read at once, at most */
#define ZF_DEPTH	16		/* pieces in flight */
#define ZF_AHEAD	(16u << 20)	/* without io_uring: readahead asked */
#define ZF_WITHDRAWN	ZF_DEPTH	/* user_data of no piece */
/*
 * The free space is zeroed in whole units of this size at file offsets
 * that are multiples of it (cut at the extent's ends): a host or device
 * block, so that a partly zeroed unit does not become a read-modify-write
 * (nor, in a file, a written block beside an unwritten extent).
 */
#define ZF_UNIT		4096u

/* How the units that hold something are zeroed. */
enum zf_how {
	ZF_HOW_RANGE,			/* ZERO_RANGE or BLKZEROOUT */
	ZF_HOW_WRITE,			/* zeros written (the host cannot) */
};

struct zf_bufs {
	unsigned char *mem;		/* ZF_DEPTH buffers, then the zeros */
	unsigned char *zeros;		/* ZF_CHUNK bytes of zeros */
	int dfd;			/* O_DIRECT on a block device, or -1 */
	int rfd;			/* a loop device's backing file, or -1 */
	uint64_t roff;			/* where the device starts in it */
	int is_blk;			/* t->fd is a block device */
	enum zf_how how;
	int unread;			/* data ranges zeroed without a read */
	struct {
		uint64_t start, len;	/* bytes of the filesystem */
	} slot[ZF_DEPTH];
	unsigned int free[ZF_DEPTH];	/* stack of unused slots */
	unsigned int nfree;
	int ring_init;			/* the ring was set up */
	int ring_ok;			/* pieces go through the ring */
	int broken;			/* a wait failed: stop waiting */
#ifdef HAVE_LIBURING
	struct io_uring ring;
#endif
};

static unsigned char *slot_buf(struct zf_bufs *z, unsigned int i)
{
	return z->mem + (size_t)i * ZF_CHUNK;
}

/* A block device gets a direct descriptor of its own; else -1. */
static int open_direct(int fd, int dryrun)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, (dryrun ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_DIRECT);
}

/*
 * Whether data ranges may be zeroed unread: only where the back end skips
 * holes (next_data), in an image file, or through a loop device that
 * passes WRITE ZEROES on to its backing file as ZERO_RANGE (without, the
 * kernel would write zero pages: no cheaper than reading).
 */
static int can_zero_unread(const struct target *t, const struct zf_bufs *z,
			   const struct stat *st)
{
	if (t->zero_write || t->zero_read || !t->ops->next_data)
		return 0;
	if (!z->is_blk)
		return 1;
	return z->rfd >= 0 &&
	       sysfs_u64(st->st_rdev, "queue/write_zeroes_max_bytes") > 0;
}

static int zf_get(struct target *t, struct zf_bufs **out)
{
	struct zf_bufs *z = t->zero_fill;
	struct stat st;
	unsigned int i;

	if (!z) {
		z = calloc(1, sizeof(*z));
		if (!z)
			return -ENOMEM;
		z->is_blk = !fstat(t->fd, &st) && S_ISBLK(st.st_mode);
		z->dfd = z->is_blk ? open_direct(t->fd, t->dryrun) : -1;
		z->rfd = z->is_blk ? target_loop_backing(t, &z->roff) : -1;
		z->how = t->zero_write ? ZF_HOW_WRITE : ZF_HOW_RANGE;
		z->unread = can_zero_unread(t, z, &st);
		for (i = 0; i < ZF_DEPTH; i++)
			z->free[z->nfree++] = i;
		t->zero_fill = z;
	}
	*out = z;
	return 0;
}

/* The buffers and the ring, on the first range that is to be read. */
static int zf_read_setup(struct zf_bufs *z)
{
	void *mem;

	if (z->mem)
		return 0;
	if (posix_memalign(&mem, 4096, (ZF_DEPTH + 1) * (size_t)ZF_CHUNK))
		return -ENOMEM;
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

static int fail(struct target *t, uint64_t at, int err)
{
	if (!t->error) {
		t->error = err < 0 ? err : -EIO;
		t->error_start = at;
	}
	return t->error;
}

/* All of [off, off + n) of the file into @buf; a short file is an error. */
static int read_full(int fd, unsigned char *buf, size_t n, off_t off)
{
	ssize_t r;

	while (n) {
		r = pread(fd, buf, n, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;	/* past the end: the gates say never */
		buf += r;
		n -= r;
		off += r;
	}
	return 0;
}

/* Zeros written over [start, start + len) of the filesystem. */
static int write_zeros(struct target *t, struct zf_bufs *z, uint64_t start,
		       uint64_t len)
{
	off_t off = (off_t)(t->base_bytes + start);
	size_t n;
	ssize_t w;

	while (len) {
		n = len < ZF_CHUNK ? len : ZF_CHUNK;
		w = pwrite(z->dfd >= 0 ? z->dfd : t->fd, z->zeros, n, off);
		if (w < 0 && errno == EINVAL && z->dfd >= 0) {
			/* the device refuses the alignment */
			close(z->dfd);
			z->dfd = -1;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return fail(t, start, w < 0 ? -errno : -EIO);
		len -= w;
		off += w;
		start += w;
	}
	return 0;
}

/*
 * [start, start + len) of the filesystem zeroed the host's cheapest way,
 * without writing data: in an image file the range becomes unwritten
 * extents (FALLOC_FL_ZERO_RANGE: the allocation stays as it was, so the
 * file neither grows nor loses its blocks, and reads return zeros); a
 * device gets BLKZEROOUT, which the kernel sends as WRITE ZEROES with
 * NOUNMAP (a loop device passes it on as ZERO_RANGE on its backing file)
 * or, where the device has no such command, as written zero pages; it
 * drops the page cache of the range, and the reads here are direct.
 * 0, 1 when the host cannot (zeros are then written), or -errno.
 */
static int zero_range(struct target *t, struct zf_bufs *z, uint64_t start,
		      uint64_t len)
{
	uint64_t range[2] = { t->base_bytes + start, len };
	int rc;

	do {
		if (z->is_blk)
			rc = ioctl(t->fd, BLKZEROOUT, range);
		else
			rc = fallocate(t->fd, FALLOC_FL_ZERO_RANGE |
				       FALLOC_FL_KEEP_SIZE, (off_t)range[0],
				       (off_t)len);
	} while (rc && errno == EINTR);
	if (rc == 0)
		return 0;
	switch (errno) {
	case EOPNOTSUPP:	/* tmpfs, NFS, ...: never for this target */
	case ENOTTY:
	case ENOSYS:
		z->how = ZF_HOW_WRITE;
		return 1;
	case EINVAL:		/* an edge not on 512 bytes, say: this once */
		return 1;
	}
	return fail(t, start, -errno);
}

/* Zeros over [start, start + len) of the filesystem, then count it. */
static int zero_run(struct target *t, struct zf_bufs *z, uint64_t start,
		    uint64_t len)
{
	int rc = 1;

	if (!t->dryrun) {
		if (z->how == ZF_HOW_RANGE)
			rc = zero_range(t, z, start, len);
		if (rc == 1)
			rc = write_zeros(t, z, start, len);
		if (rc)
			return rc;
	}
	t->stats.requests++;
	t->stats.zeroed_bytes += len;
	return 0;
}

/*
 * From @start, data in the image file (its holes were skipped): the run
 * up to *@next (at most @end) of the file's own written extents, zeroed
 * by the host without being read, as the whole of it is to be zero.  0
 * when done; 1 when [start, *next) is to be read instead: unwritten,
 * shared, or a host that cannot say or cannot zero (then from now on,
 * unless it refused only this range); or -errno.
 */
static int zero_unread(struct target *t, struct zf_bufs *z, uint64_t start,
		       uint64_t end, uint64_t *next)
{
	uint64_t off = (z->rfd >= 0 ? z->roff : 0) + t->base_bytes, run;
	int rc = fiemap_own_data(z->rfd >= 0 ? z->rfd : t->fd, off + start,
				 off + end, &run);

	*next = rc < 0 ? end : run - off;
	if (rc < 0)
		z->unread = 0;
	if (rc <= 0)
		return 1;
	if (!t->dryrun) {
		rc = zero_range(t, z, start, *next - start);
		if (rc == 1 && z->how == ZF_HOW_WRITE)
			z->unread = 0;
		if (rc)
			return rc;
	}
	t->stats.requests++;
	t->stats.zeroed_bytes += *next - start;
	t->stats.bytes += *next - start;
	target_progress(t);
	return 0;
}

/*
 * One piece read into @buf, [start, start + n) of the filesystem: the
 * units that hold something, run together, are written with zeros.
 */
static int zero_chunk(struct target *t, struct zf_bufs *z,
		      const unsigned char *buf, uint64_t start, uint64_t n)
{
	uint64_t base = t->base_bytes, pos = start, end = start + n;
	uint64_t run = 0, run_len = 0, next;
	int rc;

	while (pos < end) {
		/* the unit's end, on a multiple of ZF_UNIT of the file */
		next = (base + pos) / ZF_UNIT * ZF_UNIT + ZF_UNIT - base;
		if (next > end)
			next = end;
		if (all_zero(buf + (pos - start), next - pos)) {
			t->stats.zero_bytes += next - pos;
			if (run_len) {
				rc = zero_run(t, z, run, run_len);
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
		return zero_run(t, z, run, run_len);
	return 0;
}


/*
 * Piece [start, start + n) into @buf, synchronously: direct on a block
 * device, buffered where the device refuses the alignment (from then on).
 */
static int read_piece(struct target *t, struct zf_bufs *z, unsigned char *buf,
		      uint64_t start, uint64_t n)
{
	off_t off = (off_t)(t->base_bytes + start);
	int rc = -EINVAL;

	if (z->rfd >= 0)
		return read_full(z->rfd, buf, n, (off_t)z->roff + off);
	if (z->dfd >= 0)
		rc = read_full(z->dfd, buf, n, off);
	if (rc == -EINVAL && z->dfd >= 0) {
		close(z->dfd);
		z->dfd = -1;
	}
	if (rc == -EINVAL)
		rc = read_full(t->fd, buf, n, off);
	return rc;
}

/* A piece read whole: zeros where it is not zero, then count it. */
static int piece_done(struct target *t, struct zf_bufs *z,
		      const unsigned char *buf, uint64_t start, uint64_t n)
{
	int rc = zero_chunk(t, z, buf, start, n);

	if (rc)
		return rc;
	t->stats.bytes += n;
	target_progress(t);
	return 0;
}

/* Without a ring: one piece after the other, the kernel reading ahead. */
static int zero_fill_sync(struct target *t, struct zf_bufs *z, uint64_t pos,
			  uint64_t end)
{
	uint64_t n, ahead;
	int rc;

	while (pos < end) {
		if (target_stopped(t))
			return 1;
		n = end - pos < ZF_CHUNK ? end - pos : ZF_CHUNK;
		ahead = end - pos - n < ZF_AHEAD ? end - pos - n : ZF_AHEAD;
		if (ahead && (z->rfd >= 0 || z->dfd < 0))
			posix_fadvise(z->rfd >= 0 ? z->rfd : t->fd,
				      (off_t)(z->roff + t->base_bytes + pos + n),
				      (off_t)ahead, POSIX_FADV_WILLNEED);
		rc = read_piece(t, z, slot_buf(z, 0), pos, n);
		if (rc)
			return fail(t, pos, rc);
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
static void zq_reap(struct target *t, struct zf_bufs *z, int wait)
{
	struct io_uring_cqe *cqe;
	unsigned int i;
	int rc, res;

	while (wait && !z->broken) {
		rc = io_uring_wait_cqe(&z->ring, &cqe);
		if (rc == 0)
			break;
		if (rc == -EINTR)
			continue;
		/* the pieces in flight cannot be accounted for */
		z->broken = 1;
		fail(t, 0, rc);
		return;
	}
	while (io_uring_peek_cqe(&z->ring, &cqe) == 0) {
		i = cqe->user_data;
		res = cqe->res;
		io_uring_cqe_seen(&z->ring, cqe);
		if (i >= ZF_DEPTH)
			continue;
		z->free[z->nfree++] = i;
		if (t->error)
			continue;
		rc = 0;
		if (res < 0 || (uint64_t)res != z->slot[i].len)
			rc = read_piece(t, z, slot_buf(z, i), z->slot[i].start,
					z->slot[i].len);
		if (rc)
			fail(t, z->slot[i].start, rc);
		else
			piece_done(t, z, slot_buf(z, i), z->slot[i].start,
				   z->slot[i].len);
	}
}

/* Queue one piece; if the ring will not take it, read it here. */
static int zq_queue(struct target *t, struct zf_bufs *z, uint64_t start,
		    uint64_t n)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&z->ring);
	unsigned int i = z->free[--z->nfree];
	int rc;

	z->slot[i].start = start;
	z->slot[i].len = n;
	/* never NULL: at most ZF_DEPTH entries, each submitted at once */
	if (z->rfd >= 0)
		io_uring_prep_read(sqe, z->rfd, slot_buf(z, i), n,
				   z->roff + t->base_bytes + start);
	else
		io_uring_prep_read(sqe, z->dfd >= 0 ? z->dfd : t->fd,
				   slot_buf(z, i), n, t->base_bytes + start);
	sqe->user_data = i;
	do
		rc = io_uring_submit(&z->ring);
	while (rc == -EINTR);
	if (rc > 0)
		return 0;
	/* not consumed: withdraw it, and read without the ring from now */
	io_uring_prep_nop(sqe);
	sqe->user_data = ZF_WITHDRAWN;
	z->free[z->nfree++] = i;
	z->ring_ok = 0;
	rc = read_piece(t, z, slot_buf(z, i), start, n);
	if (rc)
		return fail(t, start, rc);
	return piece_done(t, z, slot_buf(z, i), start, n);
}

static int zero_fill_ring(struct target *t, struct zf_bufs *z, uint64_t pos,
			  uint64_t end)
{
	uint64_t n;

	while (pos < end && z->ring_ok) {
		if (target_stopped(t))
			return 1;
		if (t->error)
			return t->error;
		if (z->nfree == 0) {
			zq_reap(t, z, 1);
			if (z->broken)
				return t->error;
			continue;
		}
		n = end - pos < ZF_CHUNK ? end - pos : ZF_CHUNK;
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
static int zero_fill_read(struct target *t, struct zf_bufs *z,
			  uint64_t start, uint64_t end)
{
	int rc;

	if (start >= end)
		return t->error;
	rc = zf_read_setup(z);
	if (rc)
		return fail(t, start, rc);
#ifdef HAVE_LIBURING
	if (z->ring_ok)
		return zero_fill_ring(t, z, start, end);
#endif
	return zero_fill_sync(t, z, start, end);
}

/*
 * Of [start, end), the part [*a, *b) that starts and ends on ZF_UNIT of
 * the host file; 0 when there is none.  A unit only partly free is read
 * instead: zeroing its free part would leave it a written block, which a
 * second run would find (and zero) again.
 */
static int unit_span(const struct target *t, const struct zf_bufs *z,
		     uint64_t start, uint64_t end, uint64_t *a, uint64_t *b)
{
	uint64_t off = (z->rfd >= 0 ? z->roff : 0) + t->base_bytes;

	*a = (off + start + ZF_UNIT - 1) / ZF_UNIT * ZF_UNIT - off;
	*b = (off + end) / ZF_UNIT * ZF_UNIT - off;
	return *a < *b;
}

int target_zero_fill_fd(struct target *t, uint64_t start_bytes,
			uint64_t len_bytes)
{
	uint64_t end = start_bytes + len_bytes, a, b, pos, next;
	struct zf_bufs *z;
	int rc = zf_get(t, &z);

	if (rc)
		return fail(t, start_bytes, rc);
	if (!z->unread || !unit_span(t, z, start_bytes, end, &a, &b))
		return zero_fill_read(t, z, start_bytes, end);
	rc = zero_fill_read(t, z, start_bytes, a);
	for (pos = a; !rc && pos < b; pos = next) {
		if (target_stopped(t))
			return 1;
		next = b;
		rc = z->unread ? zero_unread(t, z, pos, b, &next) : 1;
		if (rc == 1)
			rc = zero_fill_read(t, z, pos, next);
	}
	return rc ? rc : zero_fill_read(t, z, b, end);
}

int target_zero_fill_finish(struct target *t)
{
	struct zf_bufs *z = t->zero_fill;

	if (!z)
		return t->error;
#ifdef HAVE_LIBURING
	zq_drain(t, z);
#endif
	/* what was written is on the device before e2trim says so */
	if (!t->dryrun && t->stats.zeroed_bytes && fdatasync(t->fd))
		fail(t, 0, -errno);
	return t->error;
}

void target_zero_fill_free(struct target *t)
{
	struct zf_bufs *z = t->zero_fill;

	if (!z)
		return;
#ifdef HAVE_LIBURING
	zq_drain(t, z);
	/* after a failed wait: tear down, which waits for what is left */
	if (z->ring_init)
		io_uring_queue_exit(&z->ring);
#endif
	if (z->dfd >= 0)
		close(z->dfd);
	free(z->mem);
	free(z);
	t->zero_fill = NULL;
}
