/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * target_core.h - the bottom of the target family: what a back end is
 *
 * Every back end (block device, io_uring, image file, NBD) fills in a
 * struct target: limits read once at open, and request() (or submit()
 * and finish()) for one aligned, size-limited range.  Everything else (trimming inward to the
 * granularity, splitting, skipping holes, stopping on a signal) is
 * target.c's, above them all, so that a test can put a fake request() in
 * place and inject faults.  Back ends report completions and progress
 * through the two calls here.
 */
#ifndef E2TRIM_TARGET_CORE_H
#define E2TRIM_TARGET_CORE_H

#include <signal.h>
#include <stdint.h>
#include <errno.h>

#include <e2trim_err.h>

enum trim_mode {
	TRIM_DISCARD,		/* BLKDISCARD, or punch a hole */
	TRIM_SECURE,		/* BLKSECDISCARD (block devices only) */
	TRIM_ZEROOUT,		/* BLKZEROOUT, or FALLOC_FL_ZERO_RANGE */
	TRIM_ZERO_FILL,		/* every free byte zero after, nothing
				 * grown (target_zero.c) */
};

struct target_limits {
	uint64_t granularity;	/* bytes; requests start and end on it */
	uint64_t align_offset;	/* bytes from offset 0 to the first boundary */
	uint64_t max_bytes;	/* largest request; 0 = no limit */
};

struct target_stats {
	uint64_t requests;	/* requests issued (or, dry run, planned) */
	uint64_t bytes;		/* bytes those requests covered */
	uint64_t sparse_bytes;	/* already holes in an image: left alone */
	uint64_t align_bytes;	/* left at extent edges for alignment */
	uint64_t align_extents;	/* extents too small once aligned */
	uint64_t zeroed_bytes;	/* TRIM_ZERO_FILL: written with zeros */
	uint64_t zero_bytes;	/* ... read, zero already, left alone */
	/*
	 * Sent to a server (librbd, libnbd) and then failed or never
	 * answered: the server may have carried them out, in whole or in
	 * part (target_unconfirmed()); not in requests/bytes above.
	 */
	uint64_t unconfirmed;
	uint64_t unconfirmed_bytes;
	uint64_t unconfirmed_start;	/* the lowest byte among them */
};

struct target;
struct zf_bufs;

/*
 * Every call that can fail returns errcode_t: 0, an errno value (as
 * com_err takes them, positive), or E2TRIM_ERR_INTERRUPTED when asked to
 * stop (src/README.md, "Return values").
 */
struct target_ops {
	/* One request, synchronously; bytes from the filesystem's start. */
	errcode_t (*request)(struct target *t, uint64_t start_bytes,
			     uint64_t len_bytes);
	/*
	 * Optional, asynchronous: queue one request and return at once
	 * (waiting only for a free slot).  Each completion is reported with
	 * target_complete(); finish() waits for all of them.  Both return
	 * t->error.
	 */
	errcode_t (*submit)(struct target *t, uint64_t start_bytes,
			    uint64_t len_bytes);
	errcode_t (*finish)(struct target *t);
	/*
	 * Optional: the next data (non-hole) range at or after @start_bytes
	 * and before @end_bytes; when there is none, both are @end_bytes.
	 */
	errcode_t (*next_data)(struct target *t, uint64_t start_bytes,
			       uint64_t end_bytes, uint64_t *data_start,
			       uint64_t *data_end);
	void (*close)(struct target *t);
};

struct target {
	const char *name;		/* device or image, for messages */
	const struct target_ops *ops;
	void *priv;			/* the back end's own state */
	int fd;
	uint64_t base_bytes;		/* where the filesystem starts in fd */
	enum trim_mode mode;
	struct target_limits lim;
	unsigned int dryrun : 1;
	unsigned int zero_write : 1;	/* TRIM_ZERO_FILL: write, never ask
					 * the host to zero (tests) */
	unsigned int zero_read : 1;	/* TRIM_ZERO_FILL: read everything
					 * first, even where the host could
					 * zero it unread (tests) */
	const volatile sig_atomic_t *stop;	/* non-zero: no new request */
	struct target_stats stats;	/* requests that completed */
	errcode_t error;		/* errno of the first that failed */
	uint64_t error_start;		/* and where it was */
	/* told the bytes of the plan done so far (optional) */
	void (*progress)(void *priv, uint64_t done_bytes);
	void *progress_priv;
	struct zf_bufs *zf;		/* --zero-fill's buffers (target_zero.c) */
};

/* Asked to stop: the request in flight finishes, no other starts. */
static inline int target_stopped(const struct target *t)
{
	return t->stop && *t->stop;
}

/* Account for one completed request: @res is 0 or an errno value. */
void target_complete(struct target *t, uint64_t start_bytes,
		     uint64_t len_bytes, errcode_t res);

/*
 * A request handed to a server whose completion is the failure @res (a
 * timeout, a connection lost, an error for some of its objects): it may
 * have been carried out after all, so it is counted apart from those
 * done and from those never sent, and the run stops as for any failure.
 */
void target_unconfirmed(struct target *t, uint64_t start_bytes,
			uint64_t len_bytes, errcode_t res);

/*
 * A result as the kernel and liburing give it (0, or -errno; anything
 * else counts as EIO) in the family's terms: 0 or the errno value.
 */
static inline errcode_t target_kernel_res(int res)
{
	if (res > 0)
		return EIO;
	return (errcode_t)-res;	/* conventions: the kernel's -errno, made ours */
}

/* Tell t->progress how much of the plan is done. */
void target_progress(struct target *t);

#endif /* E2TRIM_TARGET_CORE_H */
