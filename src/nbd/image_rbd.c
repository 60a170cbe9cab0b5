// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * image_rbd.c - a Ceph RBD image: its name, its clients, its size in the
 *               cluster
 *
 * The image is read and trimmed through qemu-nbd's rbd driver like any
 * VM image (nbd_io.c); what qemu does not tell is asked of the `rbd`
 * command (ceph-common), with the same conf, id and options qemu gets,
 * so that no librados is linked in: all that is asked at one point of
 * the run at once (run_cmd_many.c), each command ~0.15 s of start-up.
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
#include "rbd_dl.h"
#include "run_cmd_many.h"


#define RBD_PREFIX "rbd:"
#define MAX_OPTS 16

struct rbd_spec {
	char *buf;			/* the copy the pointers below are in */
	char *qemu;			/* the name qemu-nbd gets (see below) */
	const char *name;		/* POOL[/NAMESPACE]/IMAGE[@SNAP] */
	const char *conf, *id;		/* NULL: rbd's defaults */
	const char *key[MAX_OPTS], *val[MAX_OPTS];
	int nopts;
	unsigned int snap : 1,
		     map_known : 1;
	uint64_t (*data)[2];		/* rbd diff's extents (rbd_spec_keep_map) */
	size_t ndata;
	struct rbd_dl *dl;		/* librbd's connection, once made */
	unsigned int dl_tried : 1;
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
static int make_qemu_name(struct rbd_spec *s, const char *path)
{
	size_t len = strlen(path) + 1, i;
	char *p;

	for (i = 0; i < NTIMEOUTS; i++)
		len += strlen(timeouts[i]) + strlen(TIMEOUT_SECONDS) + 2;
	s->qemu = malloc(len);
	if (!s->qemu)
		return -1;
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
	free(s->data);
	rbd_dl_disconnect(s->dl);
	free(s);
}

static int spec_bad(struct rbd_spec *s, char *why, size_t len,
		    const char *what)
{
	snprintf(why, len, "%s; the form is "
		 "rbd:POOL/IMAGE[@SNAP][:conf=FILE][:id=USER]", what);
	rbd_spec_free(s);
	return -1;
}

/* One ":KEY=VALUE" after the name. */
static int spec_opt(struct rbd_spec *s, char *kv)
{
	char *eq = strchr(kv, '=');

	if (!eq || eq == kv || !eq[1])
		return -1;
	*eq = '\0';
	if (!strcmp(kv, "conf"))
		s->conf = eq + 1;
	else if (!strcmp(kv, "id"))
		s->id = eq + 1;
	else if (s->nopts < MAX_OPTS) {
		s->key[s->nopts] = kv;
		s->val[s->nopts++] = eq + 1;
	} else
		return -1;
	return 0;
}

int rbd_spec_parse(const char *path, struct rbd_spec **out, char *why,
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
		return -1;
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
		return -1;
	}
	*out = s;
	return 0;
}

/* rbd's argv, and where its options are spelled out */
struct rbd_argv {
	char *argv[24 + 2 * (MAX_OPTS + NTIMEOUTS)];
	char opt[MAX_OPTS + NTIMEOUTS][80];
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
	for (i = 0; i < (int)NTIMEOUTS; i++) {
		if (has_key(s, timeouts[i]))
			continue;
		snprintf(a->opt[s->nopts + i], sizeof(a->opt[0]), "--%s",
			 timeouts[i]);
		argv[n++] = a->opt[s->nopts + i];
		argv[n++] = (char *)TIMEOUT_SECONDS;
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

/* The questions e2trim asks the rbd command, at once (rbd_ask()). */
enum { ASK_STATUS, ASK_LOCKS, ASK_CONFIG, ASK_DU, ASK_DIFF, NASK };

static const char *const ask_sub[NASK][4] = {
	[ASK_STATUS] = { "status", NULL },
	[ASK_LOCKS] = { "lock", "ls", NULL },
	[ASK_CONFIG] = { "config", "image", "list", NULL },
	[ASK_DU] = { "du", "--exact", NULL },
	/* exact extents: not --whole-object */
	[ASK_DIFF] = { "diff", NULL },
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

/* Did job @i answer?  0, else -1 with its words in @why. */
static int job_ok(const struct ask_run *r, int i, char *why, size_t len)
{
	const struct cmd_job *j = &r->job[i];

	if (j->start_errno == ENOENT) {
		snprintf(why, len, "the rbd command cannot be run: install "
			 "ceph-common");
		return -1;
	}
	if (j->start_errno) {
		snprintf(why, len, "rbd: %s", strerror(j->start_errno));
		return -1;
	}
	if (!WIFEXITED(j->status) || WEXITSTATUS(j->status) || j->truncated) {
		if (j->truncated)
			snprintf(why, len, "rbd: more output than e2trim reads");
		else
			first_line(r->efd[i], why, len);
		return -1;
	}
	return 0;
}

static int ask_start(const struct rbd_spec *s, unsigned int what,
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
			return -1;
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
 * `rbd du --exact --format json` lists the image's snapshots (with a
 * "snapshot" key) and the image itself: the entry that is the one named.
 */
static int parse_used(const struct rbd_spec *s, char *out, uint64_t *used)
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
	return -1;
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

/* The number after "@key": in @p, up to @end; -1 if none. */
static int json_u64(const char *p, const char *end, const char *key,
		    uint64_t *v)
{
	const char *k = strstr(p, key);

	if (!k || k > end)
		return -1;
	*v = strtoull(k + strlen(key), NULL, 10);
	return 0;
}

/* Extents collected in order or not, then sorted and merged. */
struct extents {
	uint64_t (*d)[2];
	size_t n, cap;
};

static int extent_add(uint64_t off, uint64_t len, void *arg)
{
	struct extents *x = arg;
	uint64_t (*nd)[2];

	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 256;
		nd = realloc(x->d, x->cap * sizeof(*x->d));
		if (!nd)
			return -ENOMEM;
		x->d = nd;
	}
	x->d[x->n][0] = off;
	x->d[x->n++][1] = off + len;
	return 0;
}

/* Into @f's map, sorted and merged; @x is @f's after. */
static void extents_to_map(struct extents *x, struct rbd_facts *f)
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
 * parent's too).
 */
static int parse_diff(char *out, struct rbd_facts *f)
{
	struct extents x = { 0 };
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
		if (extent_add(off, len, &x))
			goto bad;
	}
	extents_to_map(&x, f);
	return 0;
bad:
	free(x.d);
	return -1;
}

static int add_used(uint64_t off, uint64_t len, void *arg)
{
	(void)off;
	*(uint64_t *)arg += len;
	return 0;
}

/* The connection to the cluster, made once, with the rbd command's options. */
static struct rbd_dl *lib_connect(struct rbd_spec *s)
{
	const char *key[MAX_OPTS + NTIMEOUTS + 2], *val[MAX_OPTS + NTIMEOUTS + 2];
	char why[256];
	int n = 0, i;

	if (s->dl || s->dl_tried)
		return s->dl;
	s->dl_tried = 1;
	/* its words go into e2trim's own messages, not on stderr */
	key[n] = "log_to_stderr";
	val[n++] = "false";
	key[n] = "err_to_stderr";
	val[n++] = "false";
	for (i = 0; i < (int)NTIMEOUTS; i++) {
		if (has_key(s, timeouts[i]))
			continue;
		key[n] = timeouts[i];
		val[n++] = TIMEOUT_SECONDS;
	}
	for (i = 0; i < s->nopts; i++) {
		key[n] = s->key[i];
		val[n++] = s->val[i];
	}
	if (rbd_dl_connect(s->conf, s->id, key, val, n, &s->dl, why,
			   sizeof(why)))
		s->dl = NULL;
	return s->dl;
}

/*
 * What librbd can tell of @what, through the connection: the bits it
 * answered are cleared from *@what.  Whatever it cannot tell (no librbd,
 * an error) is left to the rbd command, which says why in its words.
 */
static void ask_lib(struct rbd_spec *s, unsigned int *what,
		    struct rbd_facts *f)
{
	struct rbd_dl *d = lib_connect(s);
	struct extents x = { 0 };
	uint64_t used = 0;
	int w, l;

	if (!d || rbd_dl_open(d, s->name))
		goto out;
	if (*what & RBD_ASK_CLIENTS) {
		f->clients.watcher[0] = f->clients.locker[0] = '\0';
		w = rbd_dl_watchers(d, f->clients.watcher,
				    sizeof(f->clients.watcher));
		l = rbd_dl_lockers(d, f->clients.locker,
				   sizeof(f->clients.locker));
		if (w < 0 || l < 0)
			goto out;
		f->clients.watchers = w;
		f->clients.lockers = l;
		*what &= ~RBD_ASK_CLIENTS;
	}
	if (*what & RBD_ASK_GRANULARITY) {
		f->granularity = rbd_dl_granularity(d);
		*what &= ~RBD_ASK_GRANULARITY;
	}
	/*
	 * rbd du --exact counts what the image holds since its last
	 * snapshot, without a clone's parent: the same walk when it has
	 * none; with snapshots the command counts it
	 */
	if ((*what & RBD_ASK_USED) && !s->snap && rbd_dl_snapshots(d) == 0 &&
	    rbd_dl_extents(d, 0, add_used, &used) == 0) {
		f->used_bytes = used;
		f->used_known = 1;
		*what &= ~RBD_ASK_USED;
	}
	if ((*what & RBD_ASK_MAP) && rbd_dl_extents(d, 1, extent_add, &x) == 0) {
		extents_to_map(&x, f);
		*what &= ~RBD_ASK_MAP;
	}
	free(x.d);
out:
	if (*what & RBD_ASK_CLIENTS)	/* the command's answer, whole */
		memset(&f->clients, 0, sizeof(f->clients));
	if (d)
		rbd_dl_close_image(d);
}

int rbd_ask(struct rbd_spec *s, unsigned int what, struct rbd_facts *f,
	    char *why, size_t len)
{
	struct ask_run r;
	char w[256];
	int i, k, rc = 0;

	memset(f, 0, sizeof(*f));
	/* a snapshot's allocation map is not needed: it is never trimmed */
	if (s->snap)
		what &= ~RBD_ASK_MAP;
	ask_lib(s, &what, f);
	if (!what)
		return 0;
	if (ask_start(s, what, &r)) {
		snprintf(why, len, "rbd: %s", strerror(errno));
		ask_end(&r);
		rbd_facts_free(f);
		return -1;
	}
	for (i = 0; i < r.n; i++) {
		k = r.which[i];
		if (job_ok(&r, i, k <= ASK_LOCKS ? why : w,
			   k <= ASK_LOCKS ? len : sizeof(w))) {
			if (k <= ASK_LOCKS)
				rc = -1;
			continue;
		}
		if (k == ASK_STATUS)
			f->clients.watchers = addresses(r.job[i].out,
				f->clients.watcher, sizeof(f->clients.watcher));
		else if (k == ASK_LOCKS)
			f->clients.lockers = addresses(r.job[i].out,
				f->clients.locker, sizeof(f->clients.locker));
		else if (k == ASK_CONFIG)
			f->granularity = parse_granularity(r.job[i].out);
		else if (k == ASK_DU)
			f->used_known = !parse_used(s, r.job[i].out,
						    &f->used_bytes);
		else
			parse_diff(r.job[i].out, f);
	}
	ask_end(&r);
	if (rc)
		rbd_facts_free(f);
	return rc;
}

void rbd_facts_free(struct rbd_facts *f)
{
	free(f->data);
	f->data = NULL;
	f->ndata = 0;
	f->map_known = 0;
}

void rbd_spec_keep_map(struct rbd_spec *s, struct rbd_facts *f)
{
	free(s->data);
	s->data = f->data;
	s->ndata = f->ndata;
	s->map_known = f->map_known;
	f->data = NULL;
	rbd_facts_free(f);
}

int rbd_spec_data_map(const struct rbd_spec *s, const uint64_t (**map)[2],
		      size_t *n)
{
	*map = (const uint64_t (*)[2])s->data;
	*n = s->ndata;
	return s->map_known;
}
