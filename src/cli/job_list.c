// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * job_list.c - the list of targets and what each one lives on
 *
 * Two keys per target: the disk it is on (-j never runs two targets of
 * one disk at once, as fsck -A groups them: a partition belongs to its
 * disk, a loop device to the file behind it) and the thing itself (a
 * target given twice under two names is refused after its first entry).
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sysfs.h"
#include "job_list.h"

static void file_key(const struct stat *st, struct disk_key *k)
{
	k->kind = 2;
	k->dev = st->st_dev;
	k->ino = st->st_ino;
}

/*
 * The disk under block device @rdev: a partition's parent, and for a
 * loop device the file behind it (*@loop_off_bytes: where the loop
 * starts in it).
 */
static void blkdev_disk(dev_t rdev, struct disk_key *k,
			uint64_t *loop_off_bytes)
{
	char line[PATH_MAX];
	unsigned int maj, min;
	struct stat st;

	k->kind = 1;
	k->dev = rdev;
	k->ino = 0;
	if (!sysfs_line(rdev, "partition", line, sizeof(line)) &&
	    !sysfs_line(rdev, "../dev", line, sizeof(line)) &&
	    sscanf(line, "%u:%u", &maj, &min) == 2)
		k->dev = makedev(maj, min);
	if (sysfs_line(k->dev, "loop/backing_file", line, sizeof(line)) ||
	    stat(line, &st))
		return;
	*loop_off_bytes = sysfs_u64(k->dev, "loop/offset");
	file_key(&st, k);
}

/* FNV-1a, 64 bits, of @n bytes of @s into @h. */
static uint64_t hash_bytes(uint64_t h, const char *s, size_t n)
{
	while (n--) {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Where the field of an rbd: name at @p ends: its first ":" not escaped. */
static const char *rbd_field_end(const char *p)
{
	for (; *p && *p != ':'; p++)
		if (*p == '\\' && p[1])
			p++;
	return p;
}

/*
 * An RBD image, "rbd:POOL/IMAGE[@SNAP][:conf=FILE]...": no stat() tells
 * it, so its keys come from its name.  The disk is POOL/IMAGE in the
 * cluster its conf names: -j never runs two partitions of one image at
 * once (the second would find the first's qemu-nbd watching, and be
 * refused), while images of one cluster share no disk and run side by
 * side.  The thing itself adds @SNAP.  The same image under two
 * spellings (another conf file for the same cluster) is not told apart
 * here; its watcher is, and it is refused with 26.  A 64-bit hash stands
 * for the name: two names colliding would only be kept apart in time
 * (disk) or refused as the same (never trimmed twice at once).
 */
static void rbd_keys(const char *path, struct disk_key *disk,
		     struct disk_key *same)
{
	const char *name = path + 4, *end = rbd_field_end(name), *at, *f;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (f = end; *f; f = rbd_field_end(f + 1))
		if (!strncmp(f, ":conf=", 6)) {
			h = hash_bytes(h, f + 6, rbd_field_end(f + 1) - f - 6);
			break;
		}
	/* an '@' escaped is refused when the target is opened */
	at = memchr(name, '@', end - name);
	disk->kind = same->kind = 3;
	disk->dev = same->dev = (dev_t)h;
	disk->ino = (ino_t)hash_bytes(h, name, (at ? at : end) - name);
	same->ino = (ino_t)hash_bytes(h, name, end - name);
}

int disk_key_same(const struct disk_key *a, const struct disk_key *b)
{
	return a->kind && a->kind == b->kind && a->dev == b->dev &&
	       a->ino == b->ino;
}

struct job *job_add(struct job_list *l, const char *name)
{
	struct job *r;

	if (l->n == l->cap) {
		r = realloc(l->v, (l->cap * 2 + 8) * sizeof(*r));
		if (!r)
			return NULL;
		l->v = r;
		l->cap = l->cap * 2 + 8;
	}
	r = &l->v[l->n];
	memset(r, 0, sizeof(*r));
	r->name = strdup(name);
	r->label = strdup(name);
	r->path = strdup(name);
	if (!r->name || !r->label || !r->path) {
		free(r->name);
		free(r->label);
		free(r->path);
		return NULL;
	}
	l->n++;
	return r;
}

/*
 * A partition of an image is named "disk.img, partition 2" in every
 * message, whether -p 2 or -p all chose it: the same partition, the
 * same name (-p 2 over several images tells them apart by the name,
 * -p all the partitions of one image by the number).
 */
int job_label_partition(struct job *r, unsigned int partno)
{
	char label[PATH_MAX + 32];

	snprintf(label, sizeof(label), "%s, partition %u", r->name, partno);
	free(r->label);
	r->label = strdup(label);
	return r->label ? 0 : -1;
}

void job_refuse(struct job *r, errcode_t code, const char *detail)
{
	const char *fix = e2trim_error_fix(code, E2TRIM_FIX_COMMAND);
	const char *sep = *fix ? "; " : "";
	char what[1024], msg[PATH_MAX + 1024];
	int leads = code == E2TRIM_ERR_USAGE || code == E2TRIM_ERR_TARGETS_FILE;

	/* worded as the library words its own: "what (detail); fix" */
	e2trim_error_desc(code, what, sizeof(what));
	if (leads)
		snprintf(msg, sizeof(msg), "%s%s%s", detail, sep, fix);
	else
		snprintf(msg, sizeof(msg), "%s (%s)%s%s", what, detail, sep,
			 fix);
	job_refuse_msg(r, code, msg);
}

void job_refuse_msg(struct job *r, errcode_t code, const char *msg)
{
	r->pre_err = code;
	free(r->pre_msg);
	r->pre_msg = strdup(msg);
}

/* Which disk it is on, and what it is, for -j and for "given twice". */
void job_identify(struct job *r)
{
	struct stat st;

	if (!strncmp(r->path, "rbd:", 4)) {
		rbd_keys(r->path, &r->disk, &r->same);
		return;
	}
	if (stat(r->path, &st))
		return;		/* e2trim_open() says why */
	if (S_ISBLK(st.st_mode)) {
		r->same.kind = 1;
		r->same.dev = st.st_rdev;
		blkdev_disk(st.st_rdev, &r->disk, &r->same_offset_bytes);
		if (r->disk.kind == 2)	/* a loop device: its file */
			r->same = r->disk;
	} else if (S_ISREG(st.st_mode)) {
		file_key(&st, &r->disk);
		r->same = r->disk;
	}
}

void jobs_free(struct job_list *l)
{
	unsigned int i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].label);
		free(l->v[i].path);
		free(l->v[i].pre_msg);
		outcome_free(&l->v[i].out);
		out_buf_free(l->v[i].buf);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
