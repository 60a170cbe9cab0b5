/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * e2trim_int.h - the handle behind the public API, and how a stage
 *                records why it failed
 *
 * Nothing below the command prints: a stage that refuses or fails calls
 * lib_fail() (or returns the code after setting the detail) and the
 * caller decides what to say.
 */
#ifndef E2TRIM_INT_H
#define E2TRIM_INT_H

#include <stdint.h>
#include <time.h>
#include <sys/types.h>
#include <ext2fs/ext2fs.h>

#include "e2trim.h"
#include "bitmap.h"
#include "plan.h"

#define MAX_LOOP_HOLDS 8
#define MAX_FORCED 4
#define MAX_WARNINGS 4
#define DETAIL_LEN 640

/*
 * What the setters of e2trim.h decided (options.c), for every open of the
 * handle.  Inside the library, so bit-fields are fine here.
 */
struct lib_options {
	unsigned int partition;		/* 1-based; 0: none */
	uint64_t offset_bytes;		/* with partition 0 */
	enum e2trim_mode mode;
	unsigned int dryrun : 1,	/* E2TRIM_FLAG_DRYRUN */
		     force : 1,		/* E2TRIM_FLAG_FORCE */
		     no_verify : 1;	/* E2TRIM_FLAG_NO_VERIFY */
	char *format;			/* the handle's copy; NULL: by magic */
};

struct e2trim {
	char *path;			/* as given, for messages */
	struct lib_options opt;
	ext2_filsys fs;			/* libext2fs handle */
	struct bitmap_stream *stream;	/* its block bitmap, group by group */
	int fd;				/* our own: O_EXCL on a block device */
	int is_blkdev;
	int on_ramfs;			/* an image file there: ramfs_io.c */
	uint64_t size_bytes;		/* of the device, image or partition */
	uint64_t offset_bytes;		/* where the filesystem starts */
	char io_options[40];		/* "offset=N" for libext2fs, or empty */
	/*
	 * "/proc/self/fd/N" of @fd: the name every later open (libext2fs,
	 * its MMP reads, ramfs_io.c) is given, so that it reaches the object
	 * opened, whatever the name leads to by then; empty without /proc
	 * (open_fs.c compares the name's object after libext2fs's open).
	 */
	char fd_name[32];
	/*
	 * What bounds @size_bytes below the device or image's end, in
	 * words for the message when the filesystem claims more
	 * ("partition 1 of the dos table"); empty: the end itself.
	 */
	char bound_what[160];
	/*
	 * A VM image (qcow2, ...) or an NBD URI: everything is read and
	 * trimmed through @nbd, and @fd stays -1 so that no fast reader
	 * takes the image file's own bytes for the filesystem's.
	 */
	struct nbd_conn *nbd;
	struct rbd_spec *rbd;		/* an RBD image's name (open_rbd.c) */
	/*
	 * The RBD image, read and trimmed through librbd in the process
	 * (@nbd stays NULL, @fd -1), its exclusive lock held in a real run.
	 */
	struct rbd_io *rbd_io;
	int image_fd;			/* the VM image file, for its size */
	uint64_t cluster_bytes;		/* the image's, 0: unknown */
	int loop_fds[MAX_LOOP_HOLDS];	/* loop devices over the image, held */
	int nloops;
	dev_t file_dev;			/* the file the bytes live in (the */
	ino_t file_ino;			/* image, a loop device's backing */
	uint64_t file_start_bytes;	/* file), and the target's bytes in */
	uint64_t file_end_bytes;	/* it: for every path to them */
	dev_t self_loop;		/* the target, a loop device over it */
	int backing_fd;			/* a loop target's backing file, with
					   qemu's locks (open_paths.c) */
	unsigned int file_known : 1,
		     nbd_reopen : 1;	/* a VM image opened read-only, to be
					   reopened for writing to trim */
	long long loops_checked_ns;	/* when they were last looked for */
	long long paths_next_ns;	/* when the processes are looked at
					   again (open_paths.c) */
	struct open_witness *witness;	/* what the plan rests on, as read:
					   open_witness.c */
	struct plan_geometry geo;
	struct plan_range range;	/* validated by e2trim_set_range() */
	unsigned int checked : 1,	/* e2trim_check() passed */
		     verified : 1,	/* e2trim_verify() passed */
		     probing : 1;	/* e2trim_probe(): open_fs() stops
					   after the bounds */
	errcode_t forced[MAX_FORCED];	/* gates --force let pass */
	char forced_detail[MAX_FORCED][160];
	unsigned int nforced;
	char warnings[MAX_WARNINGS][256];	/* see e2trim_warning() */
	unsigned int nwarnings;
	const volatile sig_atomic_t *cancel;
	pid_t mmp_pid;			/* the process that took MMP: only it
					   releases it (fork, see e2trim.h) */
	struct e2trim_result res;
	struct timespec opened;		/* when e2trim_open() began: seconds */
	struct e2trim_histogram hist;	/* of the last plan walk */
	e2trim_progress_fn progress;	/* see e2trim_set_progress() */
	void *progress_priv;
	uint64_t progress_next;		/* report when done reaches it */
	struct e2trim_partition *parts;	/* of the last e2trim_partitions() */
	unsigned int nparts;
	errcode_t cause;		/* the library's or errno underneath */
	char detail[DETAIL_LEN];	/* particulars of the last error */
	char fix[DETAIL_LEN];		/* its fix spelled for this target */
	errcode_t fix_code;		/* the code @fix is for */
};

/*
 * Record why @code happened: printf-style particulars (NULL: none) and
 * returns @code, so that `return lib_fail(t, CODE, "...")` reads as
 * the refusal it is.
 */
errcode_t lib_fail(struct e2trim *t, errcode_t code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The same, the particulars being what libext2fs or errno @cause says,
 * after the printf-style context @fmt (NULL: none): "while reading
 * directory blocks 10-12: Input/output error".
 */
errcode_t lib_fail_cause(struct e2trim *t, errcode_t code, errcode_t cause,
			 const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * The fix of @code spelled for this target (fix.c), @table being the
 * table's (e2trim_error_fix(), E2TRIM_FIX_COMMAND): lib_fix() words it
 * (printf-style, a command that works as it stands between backquotes,
 * see src/README.md), lib_keep_fix() spells the table's before the open
 * that failed forgets the target, lib_fix_for() gives what to print
 * (@buf, the kept fix, or the table's).  lib_fail() forgets it.
 */
void lib_fix(struct e2trim *t, errcode_t code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void lib_keep_fix(struct e2trim *t, errcode_t code, const char *table);
const char *lib_fix_for(const struct e2trim *t, errcode_t code,
			const char *table, char *buf, size_t len);
/*
 * @s as one shell word into @buf (quoted only when it must be), and the
 * name e2fsck reads the target by, quoted: 0 when e2fsck cannot read it
 * (a VM image, an NBD URI, an RBD image).
 */
const char *lib_shell_quote(const char *s, char *buf, size_t len);
int lib_fsck_name(const struct e2trim *t, char *buf, size_t len);

/*
 * A gate that --force let pass (@code), with its particulars; or a
 * warning worth saying that stops nothing.  The caller words them (see
 * e2trim_forced(), e2trim_warning()).
 */
void lib_forced(struct e2trim *t, errcode_t code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void lib_warn(struct e2trim *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * @done of @total bytes of @stage: to the progress callback if one is
 * set, when done is 0 or total or has moved on by 1/1024 of total.
 */
void lib_progress(struct e2trim *t, enum e2trim_stage stage, uint64_t done,
		  uint64_t total);

/*
 * Cancellation, one convention across the library: a stage that sees
 * lib_cancelled() stops and returns E2TRIM_ERR_INTERRUPTED up through
 * every layer (plan_run(), the verify walk), never a private -1;
 * lib_interrupted() records it (the result's interrupted bit) and
 * returns it.
 */
/*
 * The descriptor the fast readers (bitmap_read.c, range_read.c) may read
 * the filesystem through, or -1: everything through libext2fs.  On ramfs
 * a read fills a hole for good; only ramfs_io.c reads there.
 */
static inline int lib_read_fd(const struct e2trim *t)
{
	return t->on_ramfs ? -1 : t->fd;
}

static inline int lib_cancelled(const struct e2trim *t)
{
	return t->cancel && *t->cancel;
}

errcode_t lib_interrupted(struct e2trim *t);

/*
 * The result and histogram as a new handle has them: zeros, the whole
 * range, and each public struct's struct_size (options.c).
 */
void lib_reset_result(struct e2trim *t);

/* Is @code in errors.c's table?  (Every code of the .et must be.) */
int errors_known(errcode_t code);

/* Register the e2trim and ext2 error tables with libcom_err, once. */
void lib_register_error_tables(void);

/*
 * The monotonic clock in nanoseconds, for the looks taken now and then
 * while discarding (loop devices, processes, the witness).
 */
static inline long long lib_mono_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/*
 * When a look that began (or ended) at @at and took @took is due again:
 * @min_ns later at the least, and never more than 1/@share of the time.
 */
static inline long long lib_next_look(long long at, long long took,
				      long long min_ns, int share)
{
	return at + (took * share > min_ns ? took * share : min_ns);
}

#endif /* E2TRIM_INT_H */
