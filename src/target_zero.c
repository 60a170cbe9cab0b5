// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_zero.c - --zero-fill: zeros over the free space that is not zero
 *
 * zerofree's job, for storage that cannot discard and for images that are
 * compressed or made sparse afterwards (qemu-img convert -S, fallocate
 * --dig-holes): every free block ends up zero.  Writing zeros everywhere
 * would allocate every hole of a sparse image and every unmapped block of
 * a thin volume, so the free space is read first and only the parts that
 * hold something are written.  zerofree reads one block per system call;
 * here the reads are large and the kernel reads ahead of them
 * (POSIX_FADV_WILLNEED), so the device always has work queued, and the
 * check for zeros runs at memory speed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target.h"

#define ZF_CHUNK	(4u << 20)	/* bytes read at once */
#define ZF_AHEAD	(16u << 20)	/* asked of the kernel's readahead */
/*
 * Zeros are written in whole units of this size at file offsets that are
 * multiples of it (cut at the extent's ends): a host or device block, so
 * that a partly written unit does not become a read-modify-write.
 */
#define ZF_UNIT		4096u

struct zf_bufs {
	unsigned char *buf;		/* what was read; page-aligned */
	unsigned char *zeros;		/* ZF_CHUNK bytes of zeros */
	int dfd;			/* O_DIRECT on a block device, or -1 */
};

/* A block device gets a direct descriptor of its own; else -1. */
static int open_direct(int fd, int dryrun)
{
	struct stat st;
	char path[64];

	if (fstat(fd, &st) || !S_ISBLK(st.st_mode))
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, (dryrun ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_DIRECT);
}

static int zf_get(struct target *t, struct zf_bufs **out)
{
	struct zf_bufs *z = t->zero_fill;
	void *mem;

	if (!z) {
		z = calloc(1, sizeof(*z));
		if (!z || posix_memalign(&mem, 4096, 2 * (size_t)ZF_CHUNK)) {
			free(z);
			return -ENOMEM;
		}
		z->buf = mem;
		z->zeros = z->buf + ZF_CHUNK;
		memset(z->zeros, 0, ZF_CHUNK);
		z->dfd = open_direct(t->fd, t->dryrun);
		t->zero_fill = z;
	}
	*out = z;
	return 0;
}

void target_zero_fill_free(struct target *t)
{
	struct zf_bufs *z = t->zero_fill;

	if (!z)
		return;
	if (z->dfd >= 0)
		close(z->dfd);
	free(z->buf);
	free(z);
	t->zero_fill = NULL;
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

/* Zeros over [start, start + len) of the filesystem (from @z->zeros). */
static int write_zeros(struct target *t, struct zf_bufs *z, uint64_t start,
		       uint64_t len)
{
	off_t off = (off_t)(t->base_bytes + start);
	size_t n = len;
	ssize_t w;

	if (!t->dryrun) {
		while (n) {
			w = pwrite(z->dfd >= 0 ? z->dfd : t->fd, z->zeros, n,
				   off);
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
			n -= w;
			off += w;
			start += w;
		}
	}
	t->stats.requests++;
	t->stats.zeroed_bytes += len;
	return 0;
}

/*
 * One chunk read into z->buf, [start, start + n) of the filesystem: the
 * units that hold something, run together, are written with zeros.
 */
static int zero_chunk(struct target *t, struct zf_bufs *z, uint64_t start,
		      uint64_t n)
{
	uint64_t base = t->base_bytes, pos = start, end = start + n;
	uint64_t run = 0, run_len = 0, next;
	int rc;

	while (pos < end) {
		/* the unit's end, on a multiple of ZF_UNIT of the file */
		next = (base + pos) / ZF_UNIT * ZF_UNIT + ZF_UNIT - base;
		if (next > end)
			next = end;
		if (all_zero(z->buf + (pos - start), next - pos)) {
			t->stats.zero_bytes += next - pos;
			if (run_len) {
				rc = write_zeros(t, z, run, run_len);
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
		return write_zeros(t, z, run, run_len);
	return 0;
}

int target_zero_fill_fd(struct target *t, uint64_t start_bytes,
			uint64_t len_bytes)
{
	uint64_t pos = start_bytes, end = start_bytes + len_bytes, n, ahead;
	struct zf_bufs *z;
	int rc = zf_get(t, &z);

	if (rc)
		return fail(t, start_bytes, rc);
	while (pos < end) {
		if (target_stopped(t))
			return 1;
		n = end - pos < ZF_CHUNK ? end - pos : ZF_CHUNK;
		/* the kernel reads the next chunks while this one is checked */
		ahead = end - pos - n < ZF_AHEAD ? end - pos - n : ZF_AHEAD;
		if (ahead && z->dfd < 0)
			posix_fadvise(t->fd, (off_t)(t->base_bytes + pos + n),
				      (off_t)ahead, POSIX_FADV_WILLNEED);
		rc = -EINVAL;
		if (z->dfd >= 0)
			rc = read_full(z->dfd, z->buf, n,
				       (off_t)(t->base_bytes + pos));
		if (rc == -EINVAL && z->dfd >= 0) {
			/* an alignment the device refuses: buffered from now */
			close(z->dfd);
			z->dfd = -1;
		}
		if (rc == -EINVAL)
			rc = read_full(t->fd, z->buf, n,
				       (off_t)(t->base_bytes + pos));
		if (rc)
			return fail(t, pos, rc);
		rc = zero_chunk(t, z, pos, n);
		if (rc)
			return rc;
		t->stats.bytes += n;
		pos += n;
		target_progress(t);
	}
	return 0;
}
