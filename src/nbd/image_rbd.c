// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * image_rbd.c - a Ceph RBD image: its name, its clients, its size in the
 *               cluster
 *
 * The image is read and trimmed through qemu-nbd's rbd driver like any
 * VM image (nbd_io.c); what qemu does not tell is asked of the `rbd`
 * command (ceph-common), with the same conf, id and options qemu gets,
 * so that no librados is linked in.
 *
 * The name is qemu's: "rbd:POOL/IMAGE[@SNAP]" then ":KEY=VALUE" options;
 * conf (the cluster's config file) and id (the client's user) are the
 * rbd command's -c and --id, any other key a Ceph option (--KEY VALUE).
 * qemu lets "\:" stand for a colon inside a value: refused here rather
 * than read differently from qemu.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "image_rbd.h"
#include "run_cmd.h"


#define RBD_PREFIX "rbd:"
#define MAX_OPTS 16

struct rbd_spec {
	char *buf;			/* the copy the pointers below are in */
	char *qemu;			/* the name qemu-nbd gets (see below) */
	const char *name;		/* POOL[/NAMESPACE]/IMAGE[@SNAP] */
	const char *conf, *id;		/* NULL: rbd's defaults */
	const char *key[MAX_OPTS], *val[MAX_OPTS];
	int nopts;
	unsigned int snap : 1;
};

/*
 * librados waits for a monitor or an OSD forever by default: a cluster
 * that goes away during a run would hang e2trim (and qemu-nbd) in the
 * middle of its discards.  Unless the name sets them, both qemu and the
 * rbd command get these bounds; a discard that times out is an I/O
 * error, reported as such, and what it was about is free space anyway.
 */
static const char *const timeouts[] = {
	"rados_osd_op_timeout", "rados_mon_op_timeout", "client_mount_timeout",
};
#define TIMEOUT_SECONDS "60"
#define NTIMEOUTS (sizeof(timeouts) / sizeof(timeouts[0]))

static int has_key(const struct rbd_spec *s, const char *key)
{
	int i;

	for (i = 0; i < s->nopts; i++)
		if (!strcmp(s->key[i], key))
			return 1;
	return 0;
}

/* The name as given, with the timeouts it does not set. */
static errcode_t make_qemu_name(struct rbd_spec *s, const char *path)
{
	size_t len = strlen(path) + 1, i;
	char *p;

	for (i = 0; i < NTIMEOUTS; i++)
		len += strlen(timeouts[i]) + strlen(TIMEOUT_SECONDS) + 2;
	s->qemu = malloc(len);
	if (!s->qemu)
		return ENOMEM;
	p = s->qemu + sprintf(s->qemu, "%s", path);
	for (i = 0; i < NTIMEOUTS; i++)
		if (!has_key(s, timeouts[i]))
			p += sprintf(p, ":%s=%s", timeouts[i], TIMEOUT_SECONDS);
	return 0;
}

const char *rbd_spec_qemu_name(const struct rbd_spec *s)
{
	return s->qemu;
}

int rbd_is_spec(const char *path)
{
	return !strncmp(path, RBD_PREFIX, strlen(RBD_PREFIX));
}

int rbd_spec_is_snap(const struct rbd_spec *s)
{
	return s->snap;
}

void rbd_spec_free(struct rbd_spec *s)
{
	if (!s)
		return;
	free(s->buf);
	free(s->qemu);
	free(s);
}

static errcode_t spec_bad(struct rbd_spec *s, char *why, size_t len,
			  const char *what)
{
	snprintf(why, len, "%s; the form is "
		 "rbd:POOL/IMAGE[@SNAP][:conf=FILE][:id=USER]", what);
	rbd_spec_free(s);
	return E2TRIM_ERR_USAGE;
}

/* One ":KEY=VALUE" after the name. */
static errcode_t spec_opt(struct rbd_spec *s, char *kv)
{
	char *eq = strchr(kv, '=');

	if (!eq || eq == kv || !eq[1])
		return EINVAL;
	*eq = '\0';
	if (!strcmp(kv, "conf"))
		s->conf = eq + 1;
	else if (!strcmp(kv, "id"))
		s->id = eq + 1;
	else if (s->nopts < MAX_OPTS) {
		s->key[s->nopts] = kv;
		s->val[s->nopts++] = eq + 1;
	} else
		return E2BIG;	/* more options than MAX_OPTS */
	return 0;
}

errcode_t rbd_spec_parse(const char *path, struct rbd_spec **out, char *why,
			 size_t len)
{
	struct rbd_spec *s = calloc(1, sizeof(*s));
	char *p, *next, *slash, *at;

	*out = NULL;
	if (s)
		s->buf = strdup(path + strlen(RBD_PREFIX));
	if (!s || !s->buf) {
		snprintf(why, len, "out of memory");
		rbd_spec_free(s);
		return ENOMEM;
	}
	if (strchr(s->buf, '\\'))
		return spec_bad(s, why, len, "a \\ (qemu's escape) in an "
				"RBD name is not supported");
	p = s->buf;
	next = strchr(p, ':');
	if (next)
		*next++ = '\0';
	s->name = p;
	slash = strchr(p, '/');
	at = strchr(p, '@');
	/* a name starting with '-' would read as an option of rbd's */
	if (!slash || slash == p || !slash[1] || slash[1] == '@' ||
	    p[0] == '-' || (at && (at < slash || !at[1])))
		return spec_bad(s, why, len, "no POOL/IMAGE in the RBD name");
	s->snap = at != NULL;
	for (p = next; p; p = next) {
		next = strchr(p, ':');
		if (next)
			*next++ = '\0';
		if (spec_opt(s, p))
			return spec_bad(s, why, len,
					"an RBD option that is not KEY=VALUE");
	}
	if (make_qemu_name(s, path)) {
		snprintf(why, len, "out of memory");
		rbd_spec_free(s);
		return ENOMEM;
	}
	*out = s;
	return 0;
}

/* rbd's argv: "rbd" @sub... --format json [-c CONF] [--id ID] [--K V] NAME */
static int build_argv(const struct rbd_spec *s, const char *const *sub,
		      char **argv, char (*opt)[80], int max)
{
	int n = 0, i;

	argv[n++] = (char *)"rbd";
	for (i = 0; sub[i] && n < max - 8; i++)
		argv[n++] = (char *)sub[i];
	argv[n++] = (char *)"--format";
	argv[n++] = (char *)"json";
	if (s->conf) {
		argv[n++] = (char *)"-c";
		argv[n++] = (char *)s->conf;
	}
	if (s->id) {
		argv[n++] = (char *)"--id";
		argv[n++] = (char *)s->id;
	}
	for (i = 0; i < (int)NTIMEOUTS; i++) {
		if (has_key(s, timeouts[i]))
			continue;
		snprintf(opt[s->nopts + i], sizeof(opt[0]), "--%s", timeouts[i]);
		argv[n++] = opt[s->nopts + i];
		argv[n++] = (char *)TIMEOUT_SECONDS;
	}
	for (i = 0; i < s->nopts && n < max - 3; i++) {
		snprintf(opt[i], sizeof(opt[i]), "--%s", s->key[i]);
		argv[n++] = opt[i];
		argv[n++] = (char *)s->val[i];
	}
	argv[n++] = (char *)s->name;
	argv[n] = NULL;
	return n;
}

/* The first line of what the command said on its stderr (@fd). */
static void first_line(int fd, char *why, size_t len)
{
	char buf[512];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	char *p = buf;

	buf[n > 0 ? n : 0] = '\0';
	while (*p == '\n')
		p++;
	p[strcspn(p, "\n")] = '\0';
	snprintf(why, len, "rbd: %s", *p ? p : "failed");
}

/*
 * Run the rbd command @sub on the image; its stdout into @out (@len,
 * NUL-terminated).  0 if it exited 0; else, with its words in @why, the
 * errno value of why it could not be run, or E2TRIM_ERR_NBD_START when
 * it failed.
 */
static errcode_t run_rbd(const struct rbd_spec *s, const char *const *sub,
			 char *out, size_t len, char *why, size_t wlen)
{
	char *argv[24 + 2 * (MAX_OPTS + NTIMEOUTS)];
	char opt[MAX_OPTS + NTIMEOUTS][80];
	errcode_t err;
	int efd, status;

	build_argv(s, sub, argv, opt, sizeof(argv) / sizeof(argv[0]));
	efd = memfd_create("e2trim-rbd", MFD_CLOEXEC);
	if (efd < 0) {
		err = errno;
		snprintf(why, wlen, "rbd: %s", strerror((int)err));
		return err;
	}
	err = run_cmd_capture(argv, out, len, efd, &status);
	if (err == ENOENT)
		snprintf(why, wlen, "the rbd command cannot be run: install "
			 "ceph-common");
	else if (err)
		snprintf(why, wlen, "rbd: %s", strerror((int)err));
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		first_line(efd, why, wlen);
	close(efd);
	if (!err && (!WIFEXITED(status) || WEXITSTATUS(status)))
		err = E2TRIM_ERR_NBD_START;
	return err;
}

/* Each "address":"..." in @json, appended to @who; returns how many. */
static int addresses(const char *json, char *who, size_t len)
{
	static const char key[] = "\"address\":\"";
	const char *p = json, *end;
	size_t used = strlen(who);
	int n = 0;

	while ((p = strstr(p, key))) {
		p += strlen(key);
		end = strchr(p, '"');
		if (!end)
			break;
		if (used < len)
			used += snprintf(who + used, len - used, "%s%.*s",
					 used ? ", " : "", (int)(end - p), p);
		n++;
		p = end;
	}
	return n;
}

errcode_t rbd_clients(const struct rbd_spec *s, struct rbd_clients *c,
		      char *why, size_t len)
{
	static const char *const status[] = { "status", NULL };
	static const char *const locks[] = { "lock", "ls", NULL };
	char out[16384];
	errcode_t err;

	memset(c, 0, sizeof(*c));
	err = run_rbd(s, status, out, sizeof(out), why, len);
	if (err)
		return err;
	c->watchers = addresses(out, c->watcher, sizeof(c->watcher));
	err = run_rbd(s, locks, out, sizeof(out), why, len);
	if (err)
		return err;
	c->lockers = addresses(out, c->locker, sizeof(c->locker));
	return 0;
}

/*
 * `rbd du --exact --format json` lists the image's snapshots (with a
 * "snapshot" key) and the image itself: the entry that is the one named.
 */
errcode_t rbd_used_bytes(const struct rbd_spec *s, uint64_t *used, char *why,
			 size_t len)
{
	static const char *const du[] = { "du", "--exact", NULL };
	char out[65536], *p, *end, *u;
	errcode_t err;

	err = run_rbd(s, du, out, sizeof(out), why, len);
	if (err)
		return err;
	for (p = strstr(out, "{\"name\":"); p; p = strstr(end, "{\"name\":")) {
		end = strchr(p, '}');
		if (!end)
			break;
		*end++ = '\0';
		u = strstr(p, "\"used_size\":");
		if (u && !!strstr(p, "\"snapshot\":") == s->snap) {
			*used = strtoull(u + strlen("\"used_size\":"), NULL, 10);
			return 0;
		}
	}
	snprintf(why, len, "rbd du: no size for %s", s->name);
	return ENODATA;
}

uint64_t rbd_discard_granularity(const struct rbd_spec *s)
{
	static const char *const conf[] = { "config", "image", "list", NULL };
	static const char key[] = "\"rbd_discard_granularity_bytes\","
				  "\"value\":\"";
	char out[65536], why[256], *p;
	struct rbd_spec head = *s;
	char name[512];

	/* a snapshot's settings are its image's */
	snprintf(name, sizeof(name), "%s", s->name);
	name[strcspn(name, "@")] = '\0';
	head.name = name;
	if (run_rbd(&head, conf, out, sizeof(out), why, sizeof(why)))
		return 0;
	p = strstr(out, key);
	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}
