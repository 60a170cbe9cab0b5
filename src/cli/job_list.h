/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job_list.h - the jobs of one run: a growing list of records, each with
 * the disk it lives on.
 *
 * A job is one filesystem the command trims: what the user names a
 * TARGET (an argument, a --targets-from line), or one partition of -p
 * all.  ("target" in the code is the library's: what receives the
 * discards.)  This is the bottom of the command's job family: jobs.c
 * builds the list and jobs_parts.c expands -p all, both adding,
 * identifying and refusing through here; jobs_run.c runs the jobs.
 */
#ifndef E2TRIM_JOB_LIST_H
#define E2TRIM_JOB_LIST_H

#include <sys/types.h>

#include "cli.h"
#include "outcome.h"
#include "output.h"

/*
 * What a filesystem lives on, for -j: two targets with the same disk key
 * never run at once (the way fsck -A groups them).  A partition's key is
 * its disk's, a loop device's the file behind it.
 */
struct disk_key {
	int kind;		/* 0: unknown (alone), 1: block device, 2: file,
				   3: an RBD image (job_list.c: rbd_keys) */
	dev_t dev;		/* the disk's device number, or the file's st_dev */
	ino_t ino;		/* the file's inode */
};

struct job {
	char *name;		/* as given: JSON's "target" */
	char *label;		/* in messages: the name, or "<name>, partition N"
				   (-p N and -p all alike, of an image) */
	char *path;		/* what is opened: the name without "?offset=N" */
	struct cli_opts opts;	/* partition, offset */
	struct disk_key disk;	/* -j: never two on one disk at once */
	struct disk_key same;	/* given twice: same file/device ... */
	uint64_t same_offset_bytes;	/* ... at the same offset (loop -o) */
	unsigned int partno;	/* JSON's "partition": -p N, or of -p all */
	errcode_t pre_err;	/* refused before anything was opened */
	char *pre_msg;		/* in words */
	struct outcome out;
	struct out_buf *buf;	/* -j: its lines, printed in order */
	unsigned int running : 1,
		     done : 1;
};

struct job_list {
	struct job *v;
	unsigned int n, cap;
};

void jobs_free(struct job_list *l);

/* A new entry at the end of @l (name, label and path @name); NULL: no memory. */
struct job *job_add(struct job_list *l, const char *name);

/* @r's label "<name>, partition @partno"; -1: no memory. */
int job_label_partition(struct job *r, unsigned int partno);

/* Which disk @r is on and what it is (its path is set). */
void job_identify(struct job *r);

/* @r is refused before it runs: @code, with particulars or a whole message. */
void job_refuse(struct job *r, errcode_t code, const char *detail);
void job_refuse_msg(struct job *r, errcode_t code, const char *msg);

/* @a and @b are known, and the same file or device. */
int disk_key_same(const struct disk_key *a, const struct disk_key *b);

#endif /* E2TRIM_JOB_LIST_H */
