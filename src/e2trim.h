/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * e2trim.h - libe2trim: discard the free space of an unmounted ext2/3/4
 *            filesystem, on a block device or in an image file
 *
 * The engine of the e2trim command, for programs that want it without
 * spawning a process: post-fsck hooks, image builders, fleet tools.
 *
 *	struct e2trim *t;
 *	errcode_t err = e2trim_new(&t);
 *	if (!err) err = e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN);  // options:
 *	if (!err) err = e2trim_set_partition(t, 2);  //   before the open
 *	if (!err) err = e2trim_open(t, "disk.img");  // + refusals
 *	if (!err) err = e2trim_check(t);      // safety gates (optional:
 *	if (!err) err = e2trim_verify(t);     //   apply runs them if not)
 *	if (!err) err = e2trim_apply(t, NULL, NULL);
 *	... e2trim_result(t)->bytes_trimmed ...
 *	e2trim_free(t);
 *
 * Every call that can fail returns an errcode_t: 0, or one of the
 * E2TRIM_ERR_* codes of <e2trim_err.h> (compile_et, libcom_err).  Each
 * code is one refusal or one failure; e2trim_message() spells it out,
 * with what the caller should do next, and e2trim_exit_code() gives the
 * e2trim command's exit code for it.  A refusal always comes before the
 * first discard: nothing has been trimmed.
 *
 * No function prints, exits, installs a signal handler or keeps state
 * outside its handle: two threads may each work on a filesystem of their
 * own at the same time.  One handle must not be used by two threads at
 * once.  The process-wide effects: e2trim_new() registers the e2trim and
 * ext2 error tables with libcom_err (once, thread-safely), so that
 * error_message() knows their codes; libnbd is loaded once, on the first
 * VM image; and a buffer a broken io_uring may still read into is kept
 * for the life of the process.  (The mount check and the
 * external-journal lookup take a process-wide lock: the C library's mount
 * table reader and libblkid's cache are not safe in two threads at once.)
 *
 * Link with `pkg-config --cflags --libs e2trim`.
 *
 * A handle's states (tests/unit/test_handle.c walks every arrow, and
 * tests/unit/test_api.c the setters'):
 *
 *   state     reached by                           what may follow
 *   NEW       e2trim_new(); a failed e2trim_open() the setters of options
 *             (it closed what it had opened);      (-> NEW), e2trim_open()
 *             e2trim_probe(), e2trim_partitions()  (-> OPEN), e2trim_probe()
 *             (they keep nothing open)             and e2trim_partitions()
 *                                                  (-> NEW); the stages:
 *                                                  E2TRIM_ERR_BAD_CALL
 *   OPEN      e2trim_open() returned 0             the stages; the option
 *                                                  setters, open, probe,
 *                                                  partitions: BAD_CALL
 *   CHECKED   e2trim_check() returned 0            verify, set_range, plan
 *   VERIFIED  e2trim_verify() returned 0           plan, apply (again too)
 *
 * Each stage runs the ones before it that have not passed, each gate
 * once: a refused check or verify leaves the state as it was, and asking
 * again runs it again.  e2trim_set_range() can be called in OPEN and
 * after.  Any state: e2trim_set_cancel(), e2trim_set_progress(), the
 * getters, e2trim_message(), e2trim_free().  A refused call changes no
 * state: only e2trim_detail() (the particulars of the last error) moves.
 * A NULL handle or pointer is refused with E2TRIM_ERR_INVALID_ARGUMENT
 * (exit code 3); the getters then return NULL (e2trim_result(),
 * e2trim_histogram(), e2trim_partition(), e2trim_warning()), ""
 * (e2trim_detail()) or 0 (e2trim_forced()), and e2trim_set_cancel() and
 * e2trim_set_progress() do nothing.
 *
 * How long what the library hands out stays valid:
 *  - e2trim_result(), e2trim_histogram(): the handle's own, until
 *    e2trim_free(); their numbers change as the stages run;
 *  - e2trim_partition(): the handle's own, until the next
 *    e2trim_partitions() or e2trim_free();
 *  - e2trim_detail(): until the next call on the handle that fails;
 *  - e2trim_warning(), e2trim_forced()'s *detail: until the next
 *    e2trim_open() or e2trim_free();
 *  - e2trim_version(), e2trim_error_fix(), error_message() of
 *    E2TRIM_ERR_*: the library's constants, as long as it is loaded;
 *  - e2trim_message(), e2trim_error_desc(): the caller's buffer.
 * What the caller hands in: @path and the format are copied; the cancel
 * flag and the callbacks' @priv must stay valid while the handle may use
 * them, that is until they are set again or the handle is freed.  The
 * caller allocates no struct of the library's: options go in through
 * setters, and what comes out is read through pointers (see
 * E2TRIM_HAS below).
 */
#ifndef E2TRIM_H
#define E2TRIM_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* C++ callers: every name here, and com_err's (its header has no guard),
 * has C linkage. */
#ifdef __cplusplus
extern "C" {
#endif

#include <et/com_err.h>
#include <e2trim_err.h>

#define E2TRIM_VERSION "0.2.0"

/*
 * The e2trim command's exit codes.  0-3 are the usual outcomes; 10-27
 * are refusals, and a refusal always means that nothing was discarded.
 * The same table is in README.md, e2trim --help and e2trim(8), and
 * e2trim_exit_code() maps each error code onto one of them.
 */
enum e2trim_exit {
	E2TRIM_EXIT_OK = 0,		/* trimmed, or dry run done */
	E2TRIM_EXIT_ERROR = 1,		/* operational error: open, read, discard I/O */
	E2TRIM_EXIT_UNSUPPORTED = 2,	/* the device cannot discard at all */
	E2TRIM_EXIT_USAGE = 3,		/* bad option or argument */
	E2TRIM_EXIT_IN_USE = 10,	/* mounted, swap, or opened exclusively elsewhere */
	E2TRIM_EXIT_NOT_EXT = 11,	/* no ext2/3/4 filesystem found */
	E2TRIM_EXIT_FEATURE = 12,	/* filesystem feature e2trim does not know */
	E2TRIM_EXIT_NOT_CLEAN = 13,	/* not cleanly unmounted, or errors recorded */
	E2TRIM_EXIT_JOURNAL = 14,	/* journal needs recovery */
	E2TRIM_EXIT_ORPHANS = 15,	/* orphan inodes wait to be released */
	E2TRIM_EXIT_CORRUPT = 16,	/* descriptor or bitmap checksum/layout bad */
	E2TRIM_EXIT_TRUNCATED = 17,	/* device or image smaller than the filesystem */
	E2TRIM_EXIT_MMP = 18,		/* multi-mount protection: in use elsewhere */
	E2TRIM_EXIT_UNVERIFIED = 19,	/* bitmap marks blocks free that are in use */
	E2TRIM_EXIT_FSCK_REBOOT = 20,	/* e2fsck exited 2 or 3: reboot first */
	E2TRIM_EXIT_FSCK_FAILED = 21,	/* e2fsck exited 4 or more, or could not run */
	E2TRIM_EXIT_COUNTS = 22,	/* group summary counts disagree with bitmaps */
	E2TRIM_EXIT_UNUSED_INODE = 23,	/* a directory entry names an inode in a
					   group's unused inode-table area */
	E2TRIM_EXIT_PARTITION = 24,	/* partition table: overlapping entries, an
					   extended container, a stray table */
	E2TRIM_EXIT_NBD_NO_TRIM = 25,	/* the NBD server cannot trim */
	E2TRIM_EXIT_IMAGE_LOCKED = 26,	/* the VM image is open elsewhere */
	E2TRIM_EXIT_WHOLE_DISK = 27,	/* a whole-disk image given without -p */
	/* several targets (a single one keeps its own code), as fstrim -a: */
	E2TRIM_EXIT_ALL_FAILED = 32,	/* every one failed or was refused */
	E2TRIM_EXIT_SOME_FAILED = 64,	/* some failed or were refused */
	/* as shells say 128 + SIGINT: nothing fstrim or e2fsck exits with */
	E2TRIM_EXIT_INTERRUPTED = 130,	/* stopped by SIGINT, SIGTERM or SIGHUP */
};

/* How the space is given back. */
enum e2trim_mode {
	E2TRIM_DISCARD,		/* BLKDISCARD, or punch a hole in an image */
	E2TRIM_SECURE,		/* BLKSECDISCARD (block devices only) */
	E2TRIM_ZEROOUT,		/* BLKZEROOUT, or FALLOC_FL_ZERO_RANGE */
	E2TRIM_ZERO_FILL,	/* every free block zero after (zerofree's
				   job), without growing a sparse or thin
				   target: an image file's data punched out
				   unread, a device read and zeroed only
				   where it is not zero */
};

/*
 * What the library hands out grows only at its end, and says how big it
 * is: struct e2trim_result, e2trim_histogram and e2trim_partition begin
 * with @struct_size, the sizeof the library was built with.  A member
 * added by a later release is past the struct_size of an older library:
 * a program built with a newer header tests it before reading it,
 *
 *	if (E2TRIM_HAS(r, struct e2trim_result, bytes_zeroed)) ...
 *
 * (@ptr is evaluated more than once; false for NULL).  A caller never
 * allocates, copies by value or indexes an array of these: it reads them
 * through the pointers the getters return.  No public struct has
 * bit-fields (their layout is the compiler's, and offsetof cannot take
 * them): flags are uint8_t, 0 or 1.
 */
#define E2TRIM_HAS(ptr, type, member)					\
	((ptr) != NULL && (size_t)(ptr)->struct_size >=			\
	 offsetof(type, member) + sizeof(((type *)(ptr))->member))

/* For e2trim_set_flags(); a bit not named here is refused. */
#define E2TRIM_FLAG_DRYRUN	0x1u	/* open read-only, discard nothing,
					   but count exactly what would be */
#define E2TRIM_FLAG_FORCE	0x2u	/* pass the gates of an unclean state
					   (13, 14, 15) with a warning */
#define E2TRIM_FLAG_NO_VERIFY	0x4u	/* trust the bitmap: safe only right
					   after a full e2fsck -f */

/*
 * Every number a report prints.  Owned by the handle, valid until
 * e2trim_free(); filled in as the stages run (apply updates it after
 * every request, so a callback may read it as progress).  New members
 * go at the end only (E2TRIM_HAS).
 */
#define E2TRIM_ALLOCATED_BEFORE_ONLY 2

struct e2trim_result {
	uint32_t struct_size;		/* sizeof, as the library knows it */
	/* the filesystem (after e2trim_open) */
	uint32_t block_size;		/* bytes */
	uint32_t cluster_size;		/* bytes; block_size unless bigalloc */
	uint8_t is_blkdev;		/* 1: a block device, 0: a file, NBD */
	uint8_t dryrun;			/* 1: E2TRIM_FLAG_DRYRUN */
	uint8_t interrupted;		/* 1: stopped by the cancel flag */
	uint8_t allocated_known;	/* 1: the allocated_* below are known;
					   E2TRIM_ALLOCATED_BEFORE_ONLY: only
					   allocated_before_bytes (the last look
					   failed), allocated_after_bytes 0 */
	char fs_type[8];		/* "ext2", "ext3" or "ext4", as blkid says */
	char uuid[37];			/* "5b3c4e0a-6f1d-...", lower case */
	char label[17];			/* s_volume_name, may be "" */
	/* through NBD: qemu's name of the image's format, "nbd" for a URI */
	char image_format[16];
	uint64_t blocks;		/* blocks in the filesystem */
	uint64_t free_blocks;		/* as the superblock counts them */
	uint64_t first_data_block;
	uint64_t fs_offset_bytes;	/* where it starts in the file/device */
	uint64_t size_bytes;		/* of the device, image or partition */
	/* the range, as e2trim_set_range() was given it (whole: 0,
	   UINT64_MAX, 0), and the minimum as applied */
	uint64_t range_start_bytes;
	uint64_t range_len_bytes;
	uint64_t range_minlen_bytes;
	uint64_t minlen_applied_bytes;	/* raised to the discard granularity */
	/* the target's discard limits (after e2trim_apply) */
	uint64_t granularity_bytes;	/* 1 when any byte range can go */
	uint64_t alignment_bytes;	/* first boundary's offset */
	uint64_t max_request_bytes;	/* 0: no limit */
	/* the plan */
	uint64_t extents;		/* free extents in the range */
	uint64_t extent_bytes;		/* their total length */
	uint64_t extents_below_minimum;	/* shorter than minlen: skipped */
	uint64_t bytes_below_minimum;
	/* the requests */
	uint64_t requests;		/* completed (dry run: planned) */
	uint64_t bytes_trimmed;		/* the bytes they covered */
	uint64_t bytes_already_sparse;	/* holes in an image: left alone */
	uint64_t bytes_kept_for_alignment;	/* at extent edges */
	uint64_t extents_too_small_aligned;	/* no whole granule inside */
	/*
	 * E2TRIM_ZERO_FILL: of bytes_trimmed, those zeroed (dry run: that
	 * would be) and those read and found zero, left alone.  bytes_zeroed
	 * counts both the bytes read and found not zero and an image file's
	 * data punched out unread (some of which may have held zeros).
	 * Holes of an image file are neither: bytes_already_sparse.
	 */
	uint64_t bytes_zeroed;
	uint64_t bytes_already_zero;
	/* a request that failed: -errno and where (0 if none did) */
	int32_t error_errno;
	uint64_t error_start_bytes;
	/*
	 * Image files: the bytes the file occupies on its host filesystem
	 * (st_blocks * 512), when e2trim_open() began and when
	 * e2trim_apply() ended; allocated_known is 0 for block devices,
	 * where nothing says it.
	 */
	uint64_t allocated_before_bytes;
	uint64_t allocated_after_bytes;
	double seconds;			/* wall time from e2trim_open() to the
					   end of e2trim_apply() (so far) */
	/* 0.2.0 ends here; later members below, and only below */
	/*
	 * The witness of a writer that came and went (a real run on an
	 * image file or a block device): how many times the superblock,
	 * group descriptors and MMP block were read again, their bytes in
	 * all, and the seconds those reads took.
	 */
	uint64_t witness_reads;
	uint64_t witness_bytes;
	double witness_seconds;
	/*
	 * Requests sent to a server (librbd, NBD) that then failed or were
	 * never answered (a cluster that stopped answering): the server may
	 * still carry them out, in whole or in part, so their bytes may be
	 * freed too.  Not in requests and bytes_trimmed; 0 on a run where
	 * every request sent was answered done.
	 */
	uint64_t requests_unconfirmed;
	uint64_t bytes_unconfirmed;
	uint64_t unconfirmed_start_bytes;	/* the lowest byte among them */
};

/*
 * The sizes of the free extents in the range, as e2freefrag prints them
 * but in bytes and right on bigalloc: bucket i holds the extents of
 * unit_bytes << i bytes up to twice that (bucket 0 also what is shorter
 * than a cluster, at the edges of a range).  Every free extent of the
 * range counts, the minimum not applied; merged across groups as trimmed.
 */
#define E2TRIM_HISTOGRAM_BUCKETS 64

/*
 * Frozen: an array of these is inside struct e2trim_histogram, so a new
 * per-bucket number would be a new array at the histogram's end.
 */
struct e2trim_histogram_bucket {
	uint64_t min_bytes;		/* lower bound: unit_bytes << i */
	uint64_t extents;
	uint64_t bytes;			/* their total length */
};

struct e2trim_histogram {
	uint32_t struct_size;		/* sizeof, as the library knows it */
	uint32_t nbuckets;		/* those up to the last non-empty one */
	uint64_t unit_bytes;		/* one cluster (one block unless bigalloc) */
	uint64_t extents;		/* the sum over the buckets */
	uint64_t bytes;
	struct e2trim_histogram_bucket bucket[E2TRIM_HISTOGRAM_BUCKETS];
	/* 0.2.0 ends here; later members below, and only below */
};

struct e2trim;

/*
 * The version of the library running, which may be newer than the
 * E2TRIM_VERSION a program was built with: "0.2.0", and its numbers
 * into those of @major, @minor, @patch that are not NULL.  The string is
 * the library's own.
 */
const char *e2trim_version(unsigned int *major, unsigned int *minor,
			   unsigned int *patch);

/* A new handle, nothing opened yet.  Returns 0 or E2TRIM_ERR_NO_MEMORY. */
errcode_t e2trim_new(struct e2trim **out);

/*
 * What the next e2trim_open(), e2trim_probe() (and, for the format,
 * e2trim_partitions()) is to do.  Each setter may be called only before
 * e2trim_open() has succeeded (state NEW; after: E2TRIM_ERR_BAD_CALL),
 * checks its argument where it is given (E2TRIM_ERR_INVALID_ARGUMENT,
 * the handle unchanged) and stays set for every later open of the
 * handle, a failed one included.  Nothing set: a real trim (discard) of
 * the whole file or device, its format told by its magic.
 *
 * e2trim_set_partition(): the filesystem is partition @partno (1-based,
 * MBR or GPT) of a disk image; 0: none.  e2trim_set_offset(): or it
 * starts @bytes into the image or device.  The two exclude each other:
 * set the other one to 0 first.
 */
errcode_t e2trim_set_partition(struct e2trim *t, unsigned int partno);
errcode_t e2trim_set_offset(struct e2trim *t, uint64_t bytes);

/* How the space is given back: one of the four modes (default DISCARD). */
errcode_t e2trim_set_mode(struct e2trim *t, enum e2trim_mode mode);

/*
 * E2TRIM_FLAG_* or'ed (replacing those set before; 0: none).  A bit this
 * library does not know is refused, so that a program built with a
 * newer header learns at once that its flag means nothing here.
 */
errcode_t e2trim_set_flags(struct e2trim *t, unsigned int flags);

/*
 * The image's format as qemu names it ("qcow2", "vmdk", "raw"...; 1 to
 * 15 of a-z, 0-9, '-', '_'), copied; NULL: told by its magic.  Anything
 * but raw is opened through qemu-nbd (Debian qemu-utils), as is an NBD
 * URI given as the path ("nbd://host/export",
 * "nbd+unix:///?socket=/run/sock").
 */
errcode_t e2trim_set_format(struct e2trim *t, const char *format);

/*
 * Open @path, a block device or image file, as the setters said.
 * Refuses a device that is mounted or in use, and claims it (O_EXCL,
 * loop devices over an image included) until e2trim_free().  The
 * superblock's own gates run here, once (features, MMP, journal,
 * orphans, clean state; with E2TRIM_FLAG_FORCE the state gates pass,
 * see e2trim_forced()): on a filesystem with multi-mount protection a
 * real trim then takes MMP, as e2fsck does, so that nothing is ever
 * written to a filesystem that is refused.  @path is copied.
 */
errcode_t e2trim_open(struct e2trim *t, const char *path);

/*
 * Only the first steps of e2trim_open(): refuse a device that is in use
 * or cannot be opened, and find where the filesystem starts
 * (*@fs_offset_bytes).  Nothing stays open, so that e2fsck can have the
 * device to itself; call e2trim_open() afterwards.  A VM image or an NBD
 * URI, which e2fsck cannot read, is refused (E2TRIM_ERR_USAGE); for a VM
 * image e2trim_result()'s image_format then names its format (qemu's
 * name; "nbd" for a URI, "rbd" for Ceph), and *@fs_offset_bytes and its
 * size_bytes where the filesystem is in the image's content, for a
 * program that shows that content to e2fsck itself (the e2trim command's
 * --fsck: nbdfuse over qemu-nbd).
 */
errcode_t e2trim_probe(struct e2trim *t, const char *path,
		       uint64_t *fs_offset_bytes);

/*
 * The rest of the safety gates: the device holds the whole filesystem,
 * every group descriptor (checksum, layout) and every block bitmap's
 * checksum is right, and the journal e2fsck would load holds nothing to
 * replay (its superblock checked as e2fsck checks it).  Each gate runs once, whatever calls it.
 */
errcode_t e2trim_check(struct e2trim *t);

/*
 * The codes of the gates that --force let pass, in order: the @i-th, or
 * 0 after the last; *@detail (if @detail) its particulars, or "".  Each
 * is worth a warning: blocks that hold data may be discarded.
 */
errcode_t e2trim_forced(const struct e2trim *t, unsigned int i,
			const char **detail);

/*
 * Warnings that stop nothing (say, a GPT read from its backup because
 * the primary is damaged): the @i-th, or NULL after the last.
 */
const char *e2trim_warning(const struct e2trim *t, unsigned int i);

/*
 * Check who owns every block the bitmap calls free; refuse
 * (E2TRIM_ERR_UNVERIFIED) if anything references one.  Runs the gates
 * first if they have not run.  With E2TRIM_FLAG_NO_VERIFY it does
 * nothing.
 */
errcode_t e2trim_verify(struct e2trim *t);

/*
 * The range to trim, in bytes from the start of the filesystem, as FITRIM
 * takes it (@len_bytes UINT64_MAX: to the end); extents shorter than
 * @minlen_bytes are left alone.  The whole filesystem unless set.
 * Validated here once: E2TRIM_ERR_RANGE_SHORT, E2TRIM_ERR_RANGE_OUTSIDE.
 */
errcode_t e2trim_set_range(struct e2trim *t, uint64_t start_bytes,
			   uint64_t len_bytes, uint64_t minlen_bytes);

/*
 * Each free extent of the range, in ascending order, merged across group
 * edges; those shorter than the minimum are counted, not passed.  Return
 * non-zero from @fn to stop (E2TRIM_ERR_INTERRUPTED).
 */
typedef int (*e2trim_extent_fn)(void *priv, uint64_t start_bytes,
				uint64_t len_bytes);

/*
 * Walk the plan without trimming: the extents go to @fn (may be NULL),
 * and the result's extent counts are filled in.  Runs the gates and
 * verification first if they have not run.
 */
errcode_t e2trim_plan(struct e2trim *t, e2trim_extent_fn fn, void *priv);

/*
 * Trim the range: every extent is trimmed inward to the device's discard
 * granularity and split at its largest request; once every request for
 * it has gone out, @fn (may be NULL) is given what is left of it, in
 * bytes of the file or device opened (with a partition or offset, from
 * the image's start; nothing when nothing is left).  An extent that a
 * cancel or a failed request stopped half way is not given to @fn (the
 * result counts its bytes that were trimmed); @fn returning non-zero
 * stops after the extent it was given.  A dry run counts exactly what would be
 * trimmed.  Runs the gates and verification first if they have not run.
 * On E2TRIM_ERR_DISCARD, E2TRIM_ERR_INTERRUPTED and the like the result
 * says exactly what was trimmed before the stop; the rest is untouched.
 */
errcode_t e2trim_apply(struct e2trim *t, e2trim_extent_fn fn, void *priv);

/*
 * Cancellation: while *@flag is non-zero no stage goes on and it returns
 * E2TRIM_ERR_INTERRUPTED (the result's interrupted bit set).  Verify
 * looks between inode-table groups (one group: at most 8 MiB of inode
 * table) and between directory reads, plan and apply before every
 * extent, apply also before every request (those in flight finish).  A
 * signal handler or a callback of this library may set it.  NULL: none.
 */
void e2trim_set_cancel(struct e2trim *t, const volatile sig_atomic_t *flag);

/*
 * The free-extent histogram of the last plan walk (e2trim_plan() or
 * e2trim_apply(), all zeros before one; partial if it was stopped).
 * Owned by the handle; NULL only for a NULL handle.
 */
const struct e2trim_histogram *e2trim_histogram(const struct e2trim *t);

/* Which stage a progress report is about. */
enum e2trim_stage {
	E2TRIM_STAGE_VERIFY = 1,	/* reading the inode tables */
	E2TRIM_STAGE_TRIM,		/* discarding (or zeroing out) */
	E2TRIM_STAGE_ZERO_FILL,		/* E2TRIM_ZERO_FILL: reading, zeroing */
};

/*
 * @done_bytes of @total_bytes of @stage are done.  Verification counts
 * the inode tables, trimming the free extents of the plan (the minimum
 * applied).  Called from the calling thread, between requests.
 */
typedef void (*e2trim_progress_fn)(void *priv, enum e2trim_stage stage,
				   uint64_t done_bytes, uint64_t total_bytes);

/*
 * Report progress to @fn (NULL: none, the default): once when a stage
 * starts (done 0), then each time another 1/1024 of it (at least 1 MiB)
 * is done, and once at its end (done == total) if it got there.  The
 * library reads no clock: a caller that draws should throttle by time.
 * With progress on, apply walks the plan once more first, to learn the
 * total (in memory, unless the free runs did not fit: see bitmap).
 */
void e2trim_set_progress(struct e2trim *t, e2trim_progress_fn fn, void *priv);

/* The numbers so far; NULL only for a NULL handle. */
const struct e2trim_result *e2trim_result(const struct e2trim *t);

/*
 * The particulars of the last error on @t: "mounted on /mnt", "group 3
 * descriptor checksum does not match"; "" if none.
 */
const char *e2trim_detail(const struct e2trim *t);

/*
 * @code (from a call on @t, which may be NULL) in one line, as the e2trim
 * command prints it after "e2trim: <target>: " (the fix as
 * E2TRIM_FIX_COMMAND words it).  Returns @buf ("" if @buf is NULL or
 * @len 0).  A program words its own from e2trim_error_desc(),
 * e2trim_detail() and e2trim_error_fix(code, E2TRIM_FIX_CALLER).
 */
const char *e2trim_message(const struct e2trim *t, errcode_t code,
			   char *buf, size_t len);

/*
 * The two halves of @code's message, apart (as e2fsck keeps a problem's
 * text and its prompt): what is wrong ("has a journal that needs
 * recovery"; for a code not e2trim's, error_message()'s text), into
 * @buf, which is returned; and what to do about it, worded for whoever
 * reads it: a program calling the library (no command-line options) or
 * the person running the e2trim command.  The fix is a string of the
 * library's own, valid as long as it is loaded; "" when there is none
 * (codes not e2trim's).
 */
const char *e2trim_error_desc(errcode_t code, char *buf, size_t len);

enum e2trim_fix_for {
	E2TRIM_FIX_CALLER,		/* "give e2trim_set_range() a ..." */
	E2TRIM_FIX_COMMAND,		/* "give an --offset below ..." */
};

const char *e2trim_error_fix(errcode_t code, enum e2trim_fix_for who);

/* The e2trim command's exit code for @code: 0 for 0, 1 if unknown. */
int e2trim_exit_code(errcode_t code);

/*
 * One partition of a disk image's table (see e2trim_partitions()); new
 * members go at the end only (E2TRIM_HAS).
 */
struct e2trim_partition {
	uint32_t struct_size;		/* sizeof, as the library knows it */
	uint32_t partno;		/* 1-based, as in /dev/sda1 */
	uint64_t start_bytes;
	uint64_t size_bytes;
	char fs_type[8];		/* "ext2", "ext3", "ext4"; "" if none */
	char device[64];		/* of a whole-disk block device: the
					   partition's own ("/dev/sdb2"); ""
					   for an image, or when the kernel
					   made none (loop without -P) */
	/* 0.2.0 ends here; later members below, and only below */
};

/*
 * Read the MBR or GPT table of @path (an image file or a whole-disk
 * device) into the handle: every partition that can hold a filesystem,
 * in table order, with the ext2/3/4 filesystem libblkid finds in each;
 * how many into *@n (if @n).  The whole table is checked first, as for
 * e2trim_set_partition() (E2TRIM_ERR_PARTITION and the like);
 * E2TRIM_ERR_NO_PARTITION_TABLE if there is none.  Read-only whatever
 * the flags; the partition and offset set are not used.  Nothing stays
 * open; @t may then open one of them.  The list read before is gone
 * (empty after an error).
 */
errcode_t e2trim_partitions(struct e2trim *t, const char *path,
			    unsigned int *n);

/*
 * The @i-th (from 0) partition of the last e2trim_partitions(); NULL past
 * the end.  The handle's own: valid until the next e2trim_partitions()
 * or e2trim_free().
 */
const struct e2trim_partition *e2trim_partition(const struct e2trim *t,
						unsigned int i);

/*
 * Close everything (releasing MMP, writing no metadata) and free @t.
 *
 * fork(): a handle belongs to the process that opened it.  A child may
 * call nothing on its copy but e2trim_free() (or simply exit), which
 * frees only the child's own copies (memory, descriptors): MMP, which
 * the parent holds in the filesystem's MMP block, and an NBD connection
 * and the qemu-nbd server it started stay the parent's, released by the
 * parent's e2trim_free() alone.  qemu's image locks and the loop devices'
 * O_EXCL hold go with the open file, which the parent keeps open.
 */
void e2trim_free(struct e2trim *t);

#ifdef __cplusplus
}
#endif

#endif /* E2TRIM_H */
