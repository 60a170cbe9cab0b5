// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * targets.c - many filesystems in one run
 *
 * The list: the TARGET arguments, then the lines of --targets-from, each
 * with its "?offset=N" split off (e2fsprogs' spelling) and, with -p all,
 * one entry per ext2/3/4 partition of the disk.  A target given twice,
 * under whatever name, keeps only its first entry; the others are
 * refused with their own message.
 *
 * The run: up to -j targets at once, one thread each, but never two on
 * one disk, the way fsck -A groups them: a partition belongs to its
 * disk, a loop device to the file behind it, an image to its inode.
 * With several threads each target writes into a buffer of its own
 * (output.c) and the main thread prints the buffers in the order given.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "targets.h"

volatile sig_atomic_t cli_stop;

/* The first line of a sysfs file, without its newline; -1 if none. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

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
	char sys[64], path[PATH_MAX], line[PATH_MAX];
	unsigned int maj, min;
	struct stat st;

	k->kind = 1;
	k->dev = rdev;
	k->ino = 0;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(rdev),
		 minor(rdev));
	snprintf(path, sizeof(path), "%s/partition", sys);
	if (!access(path, F_OK)) {
		snprintf(path, sizeof(path), "%s/../dev", sys);
		if (!read_line(path, line, sizeof(line)) &&
		    sscanf(line, "%u:%u", &maj, &min) == 2) {
			k->dev = makedev(maj, min);
			snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u",
				 maj, min);
		}
	}
	snprintf(path, sizeof(path), "%s/loop/backing_file", sys);
	if (read_line(path, line, sizeof(line)) || stat(line, &st))
		return;
	file_key(&st, k);
	snprintf(path, sizeof(path), "%s/loop/offset", sys);
	if (!read_line(path, line, sizeof(line)))
		*loop_off_bytes = strtoull(line, NULL, 10);
}

static int same_key(const struct disk_key *a, const struct disk_key *b)
{
	return a->kind && a->kind == b->kind && a->dev == b->dev &&
	       a->ino == b->ino;
}

struct target_rec *target_add(struct target_list *l, const char *name)
{
	struct target_rec *r;

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

void target_refuse(struct target_rec *r, errcode_t code, const char *detail)
{
	char text[1024], msg[PATH_MAX + 1024];
	const char *fix;
	int leads = code == E2TRIM_ERR_USAGE || code == E2TRIM_ERR_TARGETS_FILE;

	/* worded as the library words its own: "what (detail); fix" */
	e2trim_message(NULL, code, text, sizeof(text));
	fix = strstr(text, "; ");
	if (leads)
		snprintf(msg, sizeof(msg), "%s%s", detail, fix ? fix : "");
	else
		snprintf(msg, sizeof(msg), "%.*s (%s)%s",
			 (int)(fix ? fix - text : (long)strlen(text)), text,
			 detail, fix ? fix : "");
	target_refuse_msg(r, code, msg);
}

void target_refuse_msg(struct target_rec *r, errcode_t code, const char *msg)
{
	r->pre_err = code;
	free(r->pre_msg);
	r->pre_msg = strdup(msg);
}

/*
 * "disk.img?offset=1048576", as e2fsprogs spells a filesystem inside an
 * image: only when no file has that very name.
 */
static void split_offset(struct target_rec *r, int all_partitions)
{
	char *q = strstr(r->path, "?offset="), *end;
	unsigned long long off;
	struct stat st;

	if (!q || !stat(r->path, &st))
		return;
	errno = 0;
	off = strtoull(q + 8, &end, 10);
	if (errno || *end || end == q + 8 || q[8] == '-') {
		target_refuse(r, E2TRIM_ERR_USAGE, "invalid ?offset= (a number of "
		       "bytes, as in disk.img?offset=1048576)");
		return;
	}
	if (r->opts.partition || all_partitions) {
		target_refuse(r, E2TRIM_ERR_USAGE, "?offset= and -p exclude each "
		       "other");
		return;
	}
	*q = '\0';
	r->opts.offset_bytes = off;
}

/* Which disk it is on, and what it is, for -j and for "given twice". */
void target_identify(struct target_rec *r)
{
	struct stat st;

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

static struct target_rec *add_target(const struct e2trim_control *ctl,
				     struct target_list *l, const char *name)
{
	struct target_rec *r = target_add(l, name);

	if (!r)
		return NULL;
	r->opts = ctl->opts;
	r->partno = ctl->opts.partition;
	split_offset(r, ctl->all_partitions);
	target_identify(r);
	return r;
}

/*
 * A line of --targets-from: blank lines and "# comments" are skipped,
 * spaces around a name dropped; a control character or a NUL byte makes
 * the line malformed.  Returns the name, NULL to skip, or sets *@why.
 */
static char *parse_line(char *line, size_t len, const char **why)
{
	char *end;
	size_t i;

	*why = NULL;
	if (strlen(line) != len) {
		*why = "holds a NUL byte";
		return NULL;
	}
	line[strcspn(line, "\r\n")] = '\0';
	while (*line == ' ' || *line == '\t')
		line++;
	end = line + strlen(line);
	while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	if (!*line || *line == '#')
		return NULL;
	for (i = 0; line[i]; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f) {
			*why = "holds a control character";
			return NULL;
		}
	if (strlen(line) >= PATH_MAX)
		*why = "is longer than a path can be";
	return *why ? NULL : line;
}

static int read_targets_file(const struct e2trim_control *ctl,
			     struct target_list *l)
{
	const char *file = ctl->targets_from;
	char *line = NULL, *name, where[PATH_MAX + 32], detail[PATH_MAX + 64];
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	struct target_rec *r;
	size_t cap = 0;
	unsigned int lineno = 0;
	const char *why;
	ssize_t len;
	int ret = 0;

	if (!f) {
		warnx_target(file, "cannot open the --targets-from file: %s",
			     strerror(errno));
		return -1;
	}
	while (!ret && (len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		name = parse_line(line, (size_t)len, &why);
		if (name) {
			ret = add_target(ctl, l, name) ? 0 : -1;
			continue;
		}
		if (!why)
			continue;
		snprintf(where, sizeof(where), "%s:%u",
			 strcmp(file, "-") ? file : "stdin", lineno);
		snprintf(detail, sizeof(detail), "line %u %s", lineno, why);
		r = target_add(l, where);
		if (!r)
			ret = -1;
		else
			target_refuse(r, E2TRIM_ERR_TARGETS_FILE, detail);
	}
	if (!ret && ferror(f)) {
		warnx_target(file, "cannot read the --targets-from file: %s",
			     strerror(errno));
		ret = -1;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return ret;
}

/* The same file or device at the same place: refuse all but the first. */
static void mark_twice(struct target_list *l)
{
	char detail[PATH_MAX + 64];
	unsigned int i, k;

	for (i = 1; i < l->n; i++) {
		struct target_rec *r = &l->v[i];

		for (k = 0; k < i && !r->pre_err; k++) {
			const struct target_rec *o = &l->v[k];

			if (o->pre_err || !same_key(&r->same, &o->same) ||
			    r->same_offset_bytes + r->opts.offset_bytes !=
			    o->same_offset_bytes + o->opts.offset_bytes ||
			    r->opts.partition != o->opts.partition)
				continue;
			snprintf(detail, sizeof(detail), "the same as %s",
				 o->label);
			target_refuse(r, E2TRIM_ERR_DUPLICATE, detail);
		}
	}
}

int targets_build(const struct e2trim_control *ctl, struct target_list *l)
{
	unsigned int i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < ctl->nnames; i++)
		if (!add_target(ctl, l, ctl->names[i]))
			goto nomem;
	if (ctl->targets_from && read_targets_file(ctl, l))
		return -1;
	if (ctl->all_partitions && targets_expand_all(l))
		goto nomem;
	mark_twice(l);
	return 0;
nomem:
	warnx_target(NULL, "out of memory");
	return -1;
}

void targets_free(struct target_list *l)
{
	unsigned int i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].label);
		free(l->v[i].path);
		free(l->v[i].pre_msg);
		out_buf_free(l->v[i].buf);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
