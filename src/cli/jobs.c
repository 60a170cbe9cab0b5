// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * jobs.c - the targets of one run, built from the command line
 *
 * The TARGET arguments, then the lines of --targets-from, each with its
 * "?offset=N" split off (e2fsprogs' spelling) and, with -p all, one entry
 * per ext2/3/4 partition of the disk (jobs_parts.c).  A target given
 * twice, under whatever name, keeps only its first entry; the others are
 * refused with their own message.  jobs_run.c runs the list.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobs.h"
#include "jobs_parts.h"

/* The size in bytes of the file or block device @path; 0 if unknown. */
static uint64_t size_of(const char *path)
{
	uint64_t size = 0;
	struct stat st;
	int fd;

	if (stat(path, &st))
		return 0;
	if (S_ISREG(st.st_mode))
		return st.st_size;
	if (!S_ISBLK(st.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (ioctl(fd, BLKGETSIZE64, &size))
		size = 0;
	close(fd);
	return size;
}

/*
 * "disk.img?offset=1048576", as e2fsprogs spells a filesystem inside an
 * image: only when no file has that very name.  An offset at or past the
 * end is a mistyped argument, not a truncated filesystem.
 */
static void split_offset(struct job *r, int all_partitions)
{
	char *q = strstr(r->path, "?offset="), *end, detail[PATH_MAX + 128];
	unsigned long long off;
	struct stat st;
	uint64_t size;

	if (!q || !stat(r->path, &st))
		return;
	errno = 0;
	off = strtoull(q + 8, &end, 10);
	if (errno || *end || end == q + 8 || q[8] == '-') {
		job_refuse(r, E2TRIM_ERR_USAGE, "invalid ?offset= (a number of "
		       "bytes, as in disk.img?offset=1048576)");
		return;
	}
	if (r->opts.partition || all_partitions) {
		job_refuse(r, E2TRIM_ERR_USAGE, "?offset= and -p exclude each "
		       "other");
		return;
	}
	*q = '\0';
	size = size_of(r->path);
	if (size && off >= size) {
		snprintf(detail, sizeof(detail), "?offset=%llu is past the end "
			 "of %s, which holds %" PRIu64 " bytes", off, r->path,
			 size);
		job_refuse(r, E2TRIM_ERR_USAGE, detail);
		return;
	}
	r->opts.offset_bytes = off;
}

static struct job *add_target(const struct cli_control *ctl,
				     struct job_list *l, const char *name)
{
	struct job *r = job_add(l, name);

	if (!r)
		return NULL;
	r->opts = ctl->opts;
	r->partno = ctl->opts.partition;
	split_offset(r, ctl->all_partitions);
	/* "disk.img?offset=N" with -p names no partition: refused as given */
	if (r->partno && !r->pre_err && job_label_partition(r, r->partno))
		return NULL;
	job_identify(r);
	return r;
}

/*
 * A line of --targets-from: blank lines and "# comments" are skipped,
 * spaces around a name dropped; a control character or a NUL byte makes
 * the line malformed.  A CRLF line end (a list written on Windows) is a
 * line end; a carriage return anywhere else, or a UTF-8 byte order mark
 * (an editor's, invisible), would change the name that is trimmed, so
 * the line is refused.  Returns the name, NULL to skip, or sets *@why.
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
	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	if (len && line[len - 1] == '\r')
		line[--len] = '\0';
	if (!strncmp(line, "\xef\xbb\xbf", 3)) {
		*why = "begins with a UTF-8 byte order mark (save the list "
		       "without one)";
		return NULL;
	}
	if (strchr(line, '\r')) {
		*why = "holds a carriage return inside the name";
		return NULL;
	}
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

static int read_targets_file(const struct cli_control *ctl,
			     struct job_list *l, const char *file)
{
	char *line = NULL, *name, where[PATH_MAX + 32], detail[PATH_MAX + 64];
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	struct job *r;
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
		r = job_add(l, where);
		if (!r)
			ret = -1;
		else
			job_refuse(r, E2TRIM_ERR_TARGETS_FILE, detail);
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
static void mark_twice(struct job_list *l)
{
	char detail[PATH_MAX + 64];
	unsigned int i, k;

	for (i = 1; i < l->n; i++) {
		struct job *r = &l->v[i];

		for (k = 0; k < i && !r->pre_err; k++) {
			const struct job *o = &l->v[k];

			if (o->pre_err || !disk_key_same(&r->same, &o->same) ||
			    r->same_offset_bytes + r->opts.offset_bytes !=
			    o->same_offset_bytes + o->opts.offset_bytes ||
			    r->opts.partition != o->opts.partition)
				continue;
			snprintf(detail, sizeof(detail), "the same as %s",
				 o->label);
			job_refuse(r, E2TRIM_ERR_DUPLICATE, detail);
		}
	}
}

int jobs_build(const struct cli_control *ctl, struct job_list *l)
{
	unsigned int i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < ctl->nnames; i++)
		if (!add_target(ctl, l, ctl->names[i]))
			goto nomem;
	for (i = 0; i < ctl->ntargets_from; i++)
		if (read_targets_file(ctl, l, ctl->targets_from[i]))
			return -1;
	if (ctl->all_partitions && jobs_expand_all(l))
		goto nomem;
	mark_twice(l);
	return 0;
nomem:
	warnx_target(NULL, "out of memory");
	return -1;
}

