// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * jobs_parts.c - -p all: every ext2/3/4 partition of a disk
 *
 * An image file's partitions are opened through the image (-p N, no
 * root, no loop device); a whole-disk block device's through their own
 * devices (/dev/sdb2), found in sysfs, since the kernel refuses an
 * exclusive open of the disk while a partition of it is held, and the
 * other way round (the library names them: e2trim_partition.device).
 * Partitions without an ext filesystem (FAT, swap, a
 * BIOS boot partition) are left alone: they are not targets.  The
 * library reads and checks the whole table first, as for -p N.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jobs_parts.h"

/* One entry of the new list for partition @p of @r. */
static int add_partition(struct job_list *nl, const struct job *r,
			 const struct e2trim_partition *p, int blkdev)
{
	struct job *q = job_add(nl, r->name);

	if (!q)
		return -1;
	q->opts = r->opts;
	q->partno = p->partno;
	if (!blkdev) {
		q->opts.partition = p->partno;
		job_identify(q);
		return job_label_partition(q, p->partno);
	}
	/* a device's partition: its own device, without -p */
	if (!p->device[0]) {
		if (job_label_partition(q, p->partno))
			return -1;
		job_refuse_msg(q, E2TRIM_ERR_PARTITION_ON_BLKDEV, "has no "
			       "device of its own (a loop device without "
			       "partition scanning?); give the image file, or "
			       "attach it with losetup -P");
		return 0;
	}
	free(q->label);
	free(q->path);
	q->label = strdup(p->device);
	q->path = strdup(p->device);
	if (!q->label || !q->path)
		return -1;
	job_identify(q);
	return 0;
}

/* @r's ext partitions into @nl; its own error entry if there are none. */
static int expand(struct job_list *nl, const struct job *r)
{
	const struct e2trim_partition *p;
	struct e2trim *t = NULL;
	struct job *q;
	char msg[1024];
	unsigned int i, next = 0;
	struct stat st;
	errcode_t err;
	int blkdev = !stat(r->path, &st) && S_ISBLK(st.st_mode);
	int ret = 0;

	err = e2trim_new(&t);
	if (!err)
		err = e2trim_partitions(t, r->path, NULL);
	for (i = 0; !err && !ret && (p = e2trim_partition(t, i)); i++) {
		if (!p->fs_type[0])
			continue;
		next++;
		ret = add_partition(nl, r, p, blkdev);
	}
	if (!err && !next && !ret)
		err = E2TRIM_ERR_NO_EXT_PARTITION;
	if (err && !ret) {
		q = job_add(nl, r->name);
		if (q)
			job_refuse_msg(q, err, e2trim_message(t, err, msg,
								 sizeof(msg)));
		else
			ret = -1;
	}
	e2trim_free(t);
	return ret;
}

int jobs_expand_all(struct job_list *l)
{
	struct job_list nl = { 0 };
	unsigned int i;
	struct job *q;

	for (i = 0; i < l->n; i++) {
		struct job *r = &l->v[i];

		if (!r->pre_err) {
			if (expand(&nl, r))
				goto nomem;
			continue;
		}
		q = job_add(&nl, r->name);
		if (!q)
			goto nomem;
		free(q->label);
		q->label = strdup(r->label);
		job_refuse_msg(q, r->pre_err, r->pre_msg ? r->pre_msg : "");
		if (!q->label)
			goto nomem;
	}
	jobs_free(l);
	*l = nl;
	return 0;
nomem:
	jobs_free(&nl);
	return -1;
}
