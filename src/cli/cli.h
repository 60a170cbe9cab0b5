/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli.h - what the command line decided, and how the command speaks
 *
 * The command is libe2trim's first client: it sees the engine only
 * through <e2trim.h> (and links src/host/sysfs.c, a leaf, for itself).
 * Everything it prints on stderr goes through warnx_target(), in
 * util-linux's style: "e2trim: <target>: <message>".
 */
#ifndef E2TRIM_CLI_H
#define E2TRIM_CLI_H

#include <limits.h>
#include <stdint.h>

#include "e2trim.h"

/* --fsck: run e2fsck before the filesystem is opened */
enum fsck_mode {
	FSCK_NONE = 0,		/* no: the gates alone decide */
	FSCK_PREEN,		/* --fsck: e2fsck -p */
	FSCK_FORCE,		/* --fsck=force: e2fsck -f -p */
};

/* --progress, --no-progress, or when stderr is a terminal */
enum progress_mode {
	PROGRESS_AUTO = 0,
	PROGRESS_ON,
	PROGRESS_OFF,
};

/*
 * What the command line asks of each filesystem it opens: the library
 * takes these through its setters (cli_set_options()).
 */
struct cli_opts {
	unsigned int partition;		/* -p N, or of -p all; 0: none */
	uint64_t offset_bytes;		/* "image?offset=N" */
	enum e2trim_mode mode;		/* -s, -z, --zero-fill */
	unsigned int dryrun : 1,	/* -n */
		     force : 1,		/* -f */
		     no_verify : 1;	/* --no-verify, --fsck=force */
	const char *format;		/* --format: argv's */
};

/* -o, -l, -m: FITRIM's range, as e2trim_set_range() takes it */
struct cli_range {
	uint64_t start_bytes;
	uint64_t len_bytes;		/* UINT64_MAX: to the end */
	uint64_t minlen_bytes;
};

struct cli_control {
	const char *device;	/* the target in messages (one at a time) */
	const char *shown;	/* device as lines of text show it: text_safe() */
	const char *path;	/* what to open: device without "?offset=N" */
	struct cli_range range;	/* -o, -l, -m */
	struct cli_opts opts;	/* -p, -s, -z, -n, -f, --no-verify,
					   --zero-fill, --format */
	enum fsck_mode fsck;	/* --fsck[=force]; -n makes it e2fsck -n */
	char **names;		/* the TARGET arguments */
	unsigned int nnames;
	/* --targets-from FILE ("-": stdin), each one given, in order */
#define CLI_MAX_TARGETS_FROM 64
#define CLI_MAX_TARGETS_FROM_STR "64"
	const char *targets_from[CLI_MAX_TARGETS_FROM];
	unsigned int ntargets_from;
	unsigned int jobs;	/* -j: targets at once (1: one at a time) */
	enum progress_mode progress;
	unsigned int verbose : 2,	/* -v once (1), twice or more (2) */
		     quiet : 1,
		     list : 1,
		     json : 1,		/* --json: stdout is one JSON document */
		     all_partitions : 1,	/* -p all */
		     histogram : 1,	/* --histogram */
		     quiet_unsupported : 1,	/* no error if it cannot discard */
		     several : 1;	/* more than one target: --list names it */
};

/*
 * "e2trim: <target>: <message>" on stderr (without "<target>: " when
 * @target is NULL).  The only way the command writes to stderr.
 */
void warnx_target(const char *target, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * @s as a line of text shows it, into @buf (@len bytes, cut to fit):
 * each control byte (below 0x20, and 0x7f) as \xHH, as --list writes
 * names, the rest as it is.  Returns @buf.
 */
const char *text_safe(const char *s, char *buf, size_t len);
/* room for a target's label (a path, ", partition N") all escaped */
#define TEXT_SAFE_NAME_LEN (4 * (PATH_MAX + 32) + 1)

/* @o into @t's setters, before e2trim_open() or e2trim_probe(). */
errcode_t cli_set_options(struct e2trim *t, const struct cli_opts *o);

/* @err from a call on @t, as e2trim_message() words it. */
void warn_code(const char *target, const struct e2trim *t, errcode_t err);

/* e2trim --help on stdout, exit 0 (usage.c) */
void __attribute__((__noreturn__)) usage(void);

#endif /* E2TRIM_CLI_H */
