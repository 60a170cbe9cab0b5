// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbd_cmd.c - what the `rbd` command (ceph-common) says of an RBD image,
 *             when librbd cannot be asked in the process (rbd_dl.c)
 *
 * With the same conf, id and options qemu gets; every question of one
 * moment of the run asked at once (run_cmd_many.c): each command costs
 * ~0.15 s of start-up and reaching the cluster.  Its JSON is read for
 * the few keys needed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rbd_cmd.h"
#include "rbd_int.h"
#include "run_cmd_many.h"

/*
 * librados waits for a monitor or an OSD forever by default: a cluster
 * that goes away during a run would hang e2trim (and qemu-nbd) in the
 * middle of its discards.  Unless the name sets them, qemu, librados in
 * the process (image_rbd.c) and the rbd command get these bounds; a
 * discard that times out is an I/O error, reported as such, and what it
 * was about is free space anyway.
 */
const char *const e2t_rbd_timeouts[RBD_NTIMEOUTS] = {
	"rados_osd_op_timeout", "rados_mon_op_timeout", "client_mount_timeout",
};

int e2t_rbd_has_key(const struct rbd_spec *s, const char *key)
{
	int i;

	for (i = 0; i < s->nopts; i++)
		if (!strcmp(s->key[i], key))
			return 1;
	return 0;
}

/* rbd's argv, and where its options are spelled out */
struct rbd_argv {
	char *argv[24 + 2 * (MAX_OPTS + RBD_NTIMEOUTS)];
	char opt[MAX_OPTS + RBD_NTIMEOUTS][80];
};

/*
 * "rbd" @sub... --format json [-c CONF] [--id ID] [--K V] @name
 * (@name: NULL for the one named)
 */
static void build_argv(const struct rbd_spec *s, const char *const *sub,
		       const char *name, struct rbd_argv *a)
{
	int max = sizeof(a->argv) / sizeof(a->argv[0]), n = 0, i;
	char **argv = a->argv;

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
	for (i = 0; i < (int)RBD_NTIMEOUTS; i++) {
		if (e2t_rbd_has_key(s, e2t_rbd_timeouts[i]))
			continue;
		snprintf(a->opt[s->nopts + i], sizeof(a->opt[0]), "--%s",
			 e2t_rbd_timeouts[i]);
		argv[n++] = a->opt[s->nopts + i];
		argv[n++] = (char *)RBD_TIMEOUT_SECONDS;
	}
	for (i = 0; i < s->nopts && n < max - 3; i++) {
		snprintf(a->opt[i], sizeof(a->opt[i]), "--%s", s->key[i]);
		argv[n++] = a->opt[i];
		argv[n++] = (char *)s->val[i];
	}
	argv[n++] = (char *)(name ? name : s->name);
	argv[n] = NULL;
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

/* The questions e2trim asks the rbd command, at once (e2t_rbd_cmd_ask()). */
enum { ASK_STATUS, ASK_LOCKS, ASK_CONFIG, ASK_DU, ASK_DIFF, ASK_INFO, NASK };

static const char *const ask_sub[NASK][4] = {
	[ASK_STATUS] = { "status", NULL },
	[ASK_LOCKS] = { "lock", "ls", NULL },
	[ASK_CONFIG] = { "config", "image", "list", NULL },
	[ASK_DU] = { "du", "--exact", NULL },
	/* exact extents: not --whole-object */
	[ASK_DIFF] = { "diff", NULL },
	/* with the diff: whether it is the image's own layer (see below) */
	[ASK_INFO] = { "info", NULL },
};

/* the most rbd diff may print: ~45 bytes an extent, 1.5 M extents */
#define DIFF_MAX_BYTES (64U << 20)

struct ask_run {
	struct rbd_argv a[NASK];
	struct cmd_job job[NASK];
	int efd[NASK];
	int which[NASK];	/* job i asks which[i] */
	int n;
	char head[512];		/* the image without @SNAP */
};

/*
 * Did job @i answer?  0; else, with its words in @why, the errno value
 * of why it could not be run (ENOENT: no rbd command), or
 * E2TRIM_ERR_NBD_START when it failed or said more than is read.
 */
static errcode_t job_ok(const struct ask_run *r, int i, char *why,
			size_t len)
{
	const struct cmd_job *j = &r->job[i];

	if (j->start_errno == ENOENT) {
		snprintf(why, len, "the rbd command cannot be run: install "
			 "ceph-common");
		return ENOENT;
	}
	if (j->start_errno) {
		snprintf(why, len, "rbd: %s", strerror(j->start_errno));
		return j->start_errno;
	}
	if (!WIFEXITED(j->status) || WEXITSTATUS(j->status) || j->truncated) {
		if (j->truncated)
			snprintf(why, len, "rbd: more output than e2trim reads");
		else
			first_line(r->efd[i], why, len);
		return E2TRIM_ERR_NBD_START;
	}
	return 0;
}

/* The jobs of @what started and waited for: 0 or an errno value. */
static errcode_t ask_start(const struct rbd_spec *s, unsigned int what,
		     struct ask_run *r)
{
	int k, i;

	memset(r, 0, sizeof(*r));
	/* a snapshot's settings are its image's */
	snprintf(r->head, sizeof(r->head), "%s", s->name);
	r->head[strcspn(r->head, "@")] = '\0';
	for (k = 0; k < NASK; k++) {
		if (!(what & (1U << k)))
			continue;
		i = r->n++;
		r->which[i] = k;
		build_argv(s, ask_sub[k], k == ASK_CONFIG ? r->head : NULL,
			   &r->a[i]);
		r->job[i].argv = r->a[i].argv;
		r->job[i].max_len = k == ASK_DIFF ? DIFF_MAX_BYTES : (1U << 20);
		r->efd[i] = r->job[i].err_fd =
			memfd_create("e2trim-rbd", MFD_CLOEXEC);
		if (r->efd[i] < 0)
			return errno;
	}
	return run_cmd_many(r->job, r->n);
}

static void ask_end(struct ask_run *r)
{
	int i;

	for (i = 0; i < r->n; i++) {
		cmd_job_free(&r->job[i]);
		if (r->efd[i] >= 0)
			close(r->efd[i]);
	}
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

/*
 * The first string value of @key in `rbd ... --format json` output @json
 * into @out ("" if none, or if it holds a quote or a backslash: rbd would
 * have escaped it, and a person copies what the message shows).
 */
static void first_string(const char *json, const char *key, char *out,
			 size_t len)
{
	char pat[32];
	const char *p, *end;

	out[0] = '\0';
	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	p = strstr(json, pat);
	if (!p)
		return;
	p += strlen(pat);
	end = strchr(p, '"');
	if (!end || end[-1] == '\\' || (size_t)(end - p) >= len)
		return;
	snprintf(out, len, "%.*s", (int)(end - p), p);
}

/*
 * `rbd du --exact --format json` lists the image's snapshots (with a
 * "snapshot" key) and the image itself: the entry that is the one named.
 * 0, or ENODATA when it names no size for it.
 */
static errcode_t parse_used(const struct rbd_spec *s, char *out, uint64_t *used)
{
	char *p, *end, *u;

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
	return ENODATA;
}

static uint64_t parse_granularity(const char *out)
{
	static const char key[] = "\"rbd_discard_granularity_bytes\","
				  "\"value\":\"";
	const char *p = strstr(out, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static int by_start(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The number after "@key": in @p, up to @end; ENODATA if none. */
static errcode_t json_u64(const char *p, const char *end, const char *key,
		    uint64_t *v)
{
	const char *k = strstr(p, key);

	if (!k || k > end)
		return ENODATA;
	*v = strtoull(k + strlen(key), NULL, 10);
	return 0;
}

errcode_t e2t_rbd_extent_add(uint64_t off, uint64_t len, void *arg)
{
	struct rbd_extents *x = arg;
	uint64_t (*nd)[2];

	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 256;
		nd = realloc(x->d, x->cap * sizeof(*x->d));
		if (!nd)
			return ENOMEM;
		x->d = nd;
	}
	x->d[x->n][0] = off;
	x->d[x->n++][1] = off + len;
	return 0;
}

/* Into @f's map, sorted and merged; @x is @f's after. */
void e2t_rbd_extents_to_map(struct rbd_extents *x, struct rbd_facts *f)
{
	uint64_t (*d)[2] = x->d;
	size_t i, m;

	if (x->n)
		qsort(d, x->n, sizeof(*d), by_start);
	for (i = 0, m = 0; i < x->n; i++) {
		if (m && d[i][0] <= d[m - 1][1]) {
			if (d[i][1] > d[m - 1][1])
				d[m - 1][1] = d[i][1];
			continue;
		}
		d[m][0] = d[i][0];
		d[m++][1] = d[i][1];
	}
	f->data = d;
	f->ndata = m;
	f->map_known = 1;
	x->d = NULL;
}

/*
 * `rbd diff --format json`: [{"offset":N,"length":N,"exists":"true"},...]
 * with no --from-snap, every extent the image has allocated (a clone's
 * parent's too: rbd diff cannot leave it out).  0; EBADMSG when it does
 * not read so, or ENOMEM.
 */
static errcode_t parse_diff(char *out, struct rbd_facts *f)
{
	struct rbd_extents x = { 0 };
	errcode_t err = EBADMSG;
	uint64_t off, len;
	char *p, *end, *e;

	for (p = strchr(out, '{'); p; p = strchr(end, '{')) {
		end = strchr(p, '}');
		if (!end)
			goto bad;
		if (json_u64(p, end, "\"offset\":", &off) ||
		    json_u64(p, end, "\"length\":", &len))
			goto bad;
		/* "false" only with --from-snap: a range gone since */
		e = strstr(p, "\"exists\":\"true\"");
		if (!len || !e || e > end)
			continue;
		err = e2t_rbd_extent_add(off, len, &x);
		if (err)
			goto bad;
	}
	e2t_rbd_extents_to_map(&x, f);
	return 0;
bad:
	free(x.d);
	return err;
}

/* `rbd info --format json`: a clone ("parent") or snapshots? */
static int layered(const char *out)
{
	uint64_t n = 1;

	return strstr(out, "\"parent\":") ||
	       json_u64(out, out + strlen(out), "\"snapshot_count\":", &n) ||
	       n;
}

/* What the rbd command says of @what, all at once. */
errcode_t e2t_rbd_cmd_ask(const struct rbd_spec *s, unsigned int what,
		      struct rbd_facts *f, char *why, size_t len)
{
	errcode_t err, rc = 0;
	struct ask_run r;
	char w[256];
	int i, k, own = 0;

	if (what & RBD_ASK_MAP)
		what |= 1U << ASK_INFO;
	err = ask_start(s, what, &r);
	if (err) {
		snprintf(why, len, "rbd: %s", strerror((int)err));
		ask_end(&r);
		return err;
	}
	for (i = 0; i < r.n; i++) {
		k = r.which[i];
		err = job_ok(&r, i, k <= ASK_LOCKS ? why : w,
			     k <= ASK_LOCKS ? len : sizeof(w));
		if (err) {
			if (k <= ASK_LOCKS)
				rc = err;	/* the one @why says */
			continue;
		}
		if (k == ASK_STATUS)
			f->clients.watchers = addresses(r.job[i].out,
				f->clients.watcher, sizeof(f->clients.watcher));
		else if (k == ASK_LOCKS) {
			f->clients.lockers = addresses(r.job[i].out,
				f->clients.locker, sizeof(f->clients.locker));
			first_string(r.job[i].out, "id", f->clients.lock_id,
				     sizeof(f->clients.lock_id));
			first_string(r.job[i].out, "locker",
				     f->clients.lock_owner,
				     sizeof(f->clients.lock_owner));
		} else if (k == ASK_CONFIG)
			f->granularity = parse_granularity(r.job[i].out);
		else if (k == ASK_DU)
			f->used_known = !parse_used(s, r.job[i].out,
						    &f->used_bytes);
		else if (k == ASK_DIFF)
			parse_diff(r.job[i].out, f);
		else
			own = !layered(r.job[i].out);
	}
	ask_end(&r);
	/*
	 * rbd diff counts a clone's parent, and everything a snapshot holds
	 * too: only the map of an image with neither is its own
	 */
	if ((what & RBD_ASK_MAP) && !own) {
		free(f->data);
		f->data = NULL;
		f->ndata = 0;
		f->map_known = 0;
	}
	return rc;
}
