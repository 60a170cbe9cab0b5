/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * target.h - what receives the discards: a block device or an image file
 *
 * Both back ends sit behind one small interface: limits read once at open,
 * and request() for one aligned, size-limited range.  Everything else
 * (trimming inward to the granularity, splitting, skipping holes, counting,
 * stopping on a signal) is shared in target.c, so a test can put a fake
 * request() in place and inject faults.
 */
#ifndef E2TRIM_TARGET_H
#define E2TRIM_TARGET_H

#include <signal.h>
#include <stdint.h>

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
};

struct target;

struct target_ops {
	/* One request, synchronously; bytes from the filesystem's start. */
	int (*request)(struct target *t, uint64_t start_bytes,
		       uint64_t len_bytes);
	/*
	 * Optional, asynchronous: queue one request and return at once
	 * (waiting only for a free slot).  Each completion is reported with
	 * target_complete(); finish() waits for all of them.  Both return
	 * t->error.
	 */
	int (*submit)(struct target *t, uint64_t start_bytes,
		      uint64_t len_bytes);
	int (*finish)(struct target *t);
	/*
	 * Optional: the next data (non-hole) range at or after @start_bytes
	 * and before @end_bytes, or 1 when there is none.
	 */
	int (*next_data)(struct target *t, uint64_t start_bytes,
			 uint64_t end_bytes, uint64_t *data_start,
			 uint64_t *data_end);
	/*
	 * Optional, TRIM_ZERO_FILL: zero what is not zero in one range, as
	 * target_zero_fill_fd() does (the default, over t->fd).
	 */
	int (*zero_fill)(struct target *t, uint64_t start_bytes,
			 uint64_t len_bytes);
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
	int error;			/* -errno of the first that failed */
	uint64_t error_start;		/* and where it was */
	/* told the bytes of the plan done so far (optional) */
	void (*progress)(void *priv, uint64_t done_bytes);
	void *progress_priv;
	void *zero_fill;		/* target_zero_fill_fd()'s buffers */
};

/* Asked to stop: the request in flight finishes, no other starts. */
static inline int target_stopped(const struct target *t)
{
	return t->stop && *t->stop;
}

/*
 * Prepare @t over @fd (already open, for writing unless dry run).
 * Returns 0, -EOPNOTSUPP when the device cannot do @mode at all, or
 * another -errno.
 */
int target_blkdev_init(struct target *t, int fd, enum trim_mode mode);
int target_file_init(struct target *t, int fd, enum trim_mode mode);

/*
 * Prepare @t over the NBD connection @c (nbd_io.h), trimming inward to
 * @cluster_bytes (the VM image's cluster; 0: unknown) or the server's
 * block size, whichever is larger.  -EOPNOTSUPP for TRIM_SECURE.
 */
struct nbd_conn;
int target_nbd_init(struct target *t, struct nbd_conn *c,
		    uint64_t cluster_bytes, enum trim_mode mode);

/*
 * Switch a block device target to io_uring discards, with @sync_ops as
 * the fallback.  -EOPNOTSUPP when not built in or not possible.
 */
int target_uring_init(struct target *t, const struct target_ops *sync_ops);

/*
 * Trim one extent of the plan: inward to the granularity, split at
 * max_bytes, skipping holes.  Returns 0, 1 when asked to stop, or
 * the -errno of a failed request (t->error, t->error_start tell which).
 * With an asynchronous back end a failure may only show in a later call
 * or in target_finish().
 */
int target_trim(struct target *t, uint64_t start_bytes, uint64_t len_bytes);

/*
 * What target_trim() makes of an extent: [*start_bytes, *end_bytes)
 * trimmed inward to the granularity.  Returns 0 when nothing is left.
 */
int target_align(const struct target *t, uint64_t *start_bytes,
		 uint64_t *end_bytes);

/* Wait for every request in flight; returns t->error (0 if none failed). */
int target_finish(struct target *t);

/* Account for one completed request: @res is 0 or -errno. */
void target_complete(struct target *t, uint64_t start_bytes,
		     uint64_t len_bytes, int res);

void target_close(struct target *t);

/*
 * TRIM_ZERO_FILL over t->fd: every byte of [start, start + len) zero
 * after, a sparse or thin target not grown.  An image file (or a loop
 * device's backing file) has its data punched out unread; the rest is
 * read in large chunks (up to 16 in flight through io_uring, which may
 * still be reading when it returns: target_finish() waits) and only the
 * parts that are not zero are zeroed (a hole punched in an image file,
 * WRITE ZEROES on a device, written zeros where the host cannot).  Dry
 * run: counts, writes nothing.  Returns 0, 1 when asked to stop, or the
 * -errno of a failed read or write (perhaps of an earlier extent's piece).
 */
int target_zero_fill_fd(struct target *t, uint64_t start_bytes,
			uint64_t len_bytes);

/*
 * Wait for the pieces target_zero_fill_fd() has in flight, then flush
 * what it wrote (target_finish does).  Returns t->error.
 */
int target_zero_fill_finish(struct target *t);

/* Close and free what target_zero_fill_fd() opened (target_close does). */
void target_zero_fill_free(struct target *t);

/*
 * A loop device target (TRIM_ZERO_FILL): its backing file, open read-only,
 * which holds the device's bytes from *@offset on; -1 for any other.
 * The target owns it.
 */
int target_loop_backing(const struct target *t, uint64_t *offset);

/* The last data segment SEEK_DATA/SEEK_HOLE found, [ds, de) in file bytes. */
struct data_map {
	int64_t ds, de;
	int valid;
	/*
	 * A host that keeps no holes on record (ramfs): the file mapped,
	 * and its data is what the page cache holds (mincore); else NULL.
	 */
	void *resident;
	uint64_t resident_len;
};

/*
 * next_data() over @fd, where the filesystem starts at @base: the first
 * data segment of [start, end) in bytes of the filesystem, or 1 when it
 * is all a hole; -errno if the lookup fails.
 */
int data_map_next(struct data_map *m, int fd, uint64_t base,
		  uint64_t start_bytes, uint64_t end_bytes,
		  uint64_t *data_start, uint64_t *data_end);

/* Tell t->progress how much of the plan is done. */
void target_progress(struct target *t);

#endif /* E2TRIM_TARGET_H */
