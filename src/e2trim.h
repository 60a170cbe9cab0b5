/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * e2trim.h - what the command line decided, and how e2trim ends
 *
 * Every stage of the pipeline (open + gates, plan, target, report) takes
 * the control structure first; main() turns each stage's result into one
 * of the exit codes below, in one place.
 */
#ifndef E2TRIM_H
#define E2TRIM_H

#include <stdint.h>

#include "target.h"

#define E2TRIM_VERSION "0.1.0"

/*
 * Exit codes.  0-3 are the usual outcomes; 10-19 and 22-24 are refusals,
 * and a refusal always means that nothing was discarded; so do 20 and 21,
 * when e2fsck (--fsck) stopped the run.  The same table is in
 * README.md, e2trim --help and e2trim(8): change all of them together.
 */
enum e2trim_exit {
	EXIT_OK = 0,		/* trimmed, or dry run done */
	EXIT_ERROR = 1,		/* operational error: open, read, discard I/O */
	EXIT_UNSUPPORTED = 2,	/* the device cannot discard at all */
	EXIT_USAGE = 3,		/* bad option or argument */
	EXIT_IN_USE = 10,	/* mounted, swap, or opened exclusively elsewhere */
	EXIT_NOT_EXT = 11,	/* no ext2/3/4 filesystem found */
	EXIT_FEATURE = 12,	/* filesystem feature e2trim does not know */
	EXIT_NOT_CLEAN = 13,	/* not cleanly unmounted, or errors recorded */
	EXIT_JOURNAL = 14,	/* journal needs recovery */
	EXIT_ORPHANS = 15,	/* orphan inodes wait to be released */
	EXIT_CORRUPT = 16,	/* descriptor or bitmap checksum/layout bad */
	EXIT_TRUNCATED = 17,	/* device or image smaller than the filesystem */
	EXIT_MMP = 18,		/* multi-mount protection: in use elsewhere */
	EXIT_UNVERIFIED = 19,	/* bitmap marks blocks free that are in use */
	EXIT_FSCK_REBOOT = 20,	/* e2fsck exited 2 or 3: reboot first */
	EXIT_FSCK_FAILED = 21,	/* e2fsck exited 4 or more, or could not run */
	EXIT_COUNTS = 22,	/* group summary counts disagree with bitmaps */
	EXIT_UNUSED_INODE = 23,	/* a directory entry names an inode in a
				   group's unused inode-table area */
	EXIT_PARTITION = 24,	/* partition table: overlapping entries, an
				   extended container, a stray table */
	EXIT_INTERRUPTED = 32,	/* stopped by SIGINT or SIGTERM */
};

/* --fsck: run e2fsck before the filesystem is opened */
enum fsck_mode {
	FSCK_NONE = 0,		/* no: the gates alone decide */
	FSCK_PREEN,		/* --fsck: e2fsck -p */
	FSCK_FORCE,		/* --fsck=force: e2fsck -f -p */
};

struct e2trim_control {
	const char *device;	/* block device or image file */
	uint64_t start_bytes;	/* -o: start of the range to trim */
	uint64_t len_bytes;	/* -l: length of the range, UINT64_MAX = to end */
	uint64_t minlen_bytes;	/* -m: skip free extents shorter than this */
	enum trim_mode mode;	/* -s, -z: how to give the space back */
	unsigned int partition;	/* -p: partition number in an image, or 0 */
	enum fsck_mode fsck;	/* --fsck[=force]; -n makes it e2fsck -n */
	unsigned int dryrun : 1,
		     verbose : 1,
		     quiet : 1,
		     force : 1,
		     list : 1,
		     no_verify : 1;	/* trust the bitmap: --no-verify, or
					   whatever just proved it (e2fsck -f) */
};

extern const char *program_name;

#endif /* E2TRIM_H */
