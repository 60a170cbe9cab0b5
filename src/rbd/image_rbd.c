// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * image_rbd.c - a Ceph RBD image: its name, its clients, its size in the
 *               cluster, where it holds data
 *
 * The image is read and trimmed through librbd in the process (rbd_io.c,
 * target_rbd.c); what e2trim asks of it is asked of librbd too
 * (rbd_dl.c), on the same connection, or, when librbd cannot answer, of
 * the `rbd` command (rbd_cmd.c).
 *
 * The name is qemu's: "rbd:POOL/IMAGE[@SNAP]" then ":KEY=VALUE" options,
 * "\:" a colon inside a name or a value (rbd_name.c, which takes only
 * the few keys that touch no local file); conf (the cluster's config
 * file) and id (the client's user) are the rbd command's -c and --id,
 * the other keys Ceph options (--KEY VALUE).  qemu-nbd gets the name as
 * written: it undoes the escapes as rbd_name.c does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image_rbd.h"
#include "rbd_cmd.h"
#include "rbd_dl.h"
#include "rbd_int.h"
#include "rbd_name.h"

#define RBD_PREFIX "rbd:"

/* The name as given, with the timeouts it does not set. */
static errcode_t make_qemu_name(struct rbd_spec *s, const char *path)
{
	size_t len = strlen(path) + 1, i;
	char *p;

	for (i = 0; i < RBD_NTIMEOUTS; i++)
		len += strlen(e2t_rbd_timeouts[i]) + strlen(RBD_TIMEOUT_SECONDS) + 2;
	s->qemu = malloc(len);
	if (!s->qemu)
		return ENOMEM;
	p = s->qemu + sprintf(s->qemu, "%s", path);
	for (i = 0; i < RBD_NTIMEOUTS; i++)
		if (!e2t_rbd_has_key(s, e2t_rbd_timeouts[i]))
			p += sprintf(p, ":%s=%s", e2t_rbd_timeouts[i], RBD_TIMEOUT_SECONDS);
	return 0;
}

const char *e2t_rbd_spec_qemu_name(const struct rbd_spec *s)
{
	return s->qemu;
}

int e2t_rbd_is_spec(const char *path)
{
	return !strncmp(path, RBD_PREFIX, strlen(RBD_PREFIX));
}

int e2t_rbd_spec_is_snap(const struct rbd_spec *s)
{
	return s->snap;
}

void e2t_rbd_spec_free(struct rbd_spec *s)
{
	if (!s)
		return;
	free(s->buf);
	free(s->qemu);
	free(s->data);
	e2t_rbd_dl_disconnect(s->dl);
	free(s);
}

errcode_t e2t_rbd_spec_parse(const char *path, struct rbd_spec **out, char *why,
			 size_t len)
{
	struct rbd_spec *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (s)
		s->buf = strdup(path + strlen(RBD_PREFIX));
	if (!s || !s->buf) {
		snprintf(why, len, "out of memory");
		e2t_rbd_spec_free(s);
		return ENOMEM;
	}
	if (e2t_rbd_name_parse(s, why, len)) {
		e2t_rbd_spec_free(s);
		return E2TRIM_ERR_USAGE;
	}
	if (make_qemu_name(s, path)) {
		snprintf(why, len, "out of memory");
		e2t_rbd_spec_free(s);
		return ENOMEM;
	}
	*out = s;
	return 0;
}

/* The bytes e2t_rbd_extent_add() collected: what rbd du --exact counts. */
static uint64_t extents_bytes(const struct rbd_extents *x)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < x->n; i++)
		sum += x->d[i][1] - x->d[i][0];
	return sum;
}

/*
 * Where the image's own layer holds data, into @x: a clone's parent is
 * not its own (a discard over what only the parent holds makes librbd
 * copy the 4 MiB object up: the clone grows), nor is what a snapshot
 * holds (a discard there frees nothing, the snapshot keeps it): with
 * snapshots, only what changed since the newest.  Exact extents, not
 * whole objects: a discard then never reaches an object the image does
 * not have itself (the granularity is capped at the object size).
 */
static errcode_t own_map(struct rbd_dl *d, struct rbd_extents *x)
{
	char from[256];
	errcode_t err = e2t_rbd_dl_newest_snap(d, from, sizeof(from));

	if (!err)
		err = e2t_rbd_dl_extents(d, *from ? from : NULL, 0,
				     e2t_rbd_extent_add, x);
	return err;
}

/* The connection to the cluster, made once, with qemu's options. */
static struct rbd_dl *lib_connect(struct rbd_spec *s)
{
	const char *key[MAX_OPTS + RBD_NTIMEOUTS + 4];
	const char *val[MAX_OPTS + RBD_NTIMEOUTS + 4];
	int n = 0, i;

	if (s->dl || s->dl_tried)
		return s->dl;
	s->dl_tried = 1;
	/* its words go into e2trim's own messages, not on stderr */
	key[n] = "log_to_stderr";
	val[n++] = "false";
	key[n] = "err_to_stderr";
	val[n++] = "false";
	/*
	 * librbd writes the access time into the image's header at each
	 * open (60 s apart): a dry run, a refusal and each question would
	 * change the image
	 */
	if (!e2t_rbd_has_key(s, "rbd_atime_update_interval")) {
		key[n] = "rbd_atime_update_interval";
		val[n++] = "0";
	}
	/*
	 * rbd_diff_iterate2's exact extents are one request per object, 10
	 * in flight by default: a 1 GiB image's 256 objects took 20-30 ms
	 * a walk, about 40 % less with 32 (this client's requests only)
	 */
	if (!e2t_rbd_has_key(s, "rbd_concurrent_management_ops")) {
		key[n] = "rbd_concurrent_management_ops";
		val[n++] = "32";
	}
	for (i = 0; i < (int)RBD_NTIMEOUTS; i++) {
		if (e2t_rbd_has_key(s, e2t_rbd_timeouts[i]))
			continue;
		key[n] = e2t_rbd_timeouts[i];
		val[n++] = RBD_TIMEOUT_SECONDS;
	}
	for (i = 0; i < s->nopts; i++) {
		key[n] = s->key[i];
		val[n++] = s->val[i];
	}
	s->dl_err = e2t_rbd_dl_connect(s->conf, s->id, key, val, n, &s->dl,
				   s->dl_why, sizeof(s->dl_why));
	if (s->dl_err)
		s->dl = NULL;
	return s->dl;
}

errcode_t e2t_rbd_spec_connect(struct rbd_spec *s, struct rbd_dl **out, char *why,
			   size_t len)
{
	*out = lib_connect(s);
	if (!*out)
		snprintf(why, len, "%s", s->dl_why);
	return *out ? 0 : s->dl_err;
}

const char *e2t_rbd_spec_name(const struct rbd_spec *s)
{
	return s->name;
}

const char *e2t_rbd_spec_id(const struct rbd_spec *s)
{
	return s->id ? s->id : "admin";
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
	struct rbd_extents x = { 0 };
	errcode_t ew, el;
	int w, l, snaps;

	if (!d || e2t_rbd_dl_open(d, s->name))
		goto out;
	if (*what & RBD_ASK_CLIENTS) {
		f->clients.watcher[0] = f->clients.locker[0] = '\0';
		ew = e2t_rbd_dl_watchers(d, &w, f->clients.watcher,
				     sizeof(f->clients.watcher));
		el = e2t_rbd_dl_lockers(d, &l, f->clients.locker,
				    sizeof(f->clients.locker),
				    f->clients.lock_id,
				    sizeof(f->clients.lock_id),
				    f->clients.lock_owner,
				    sizeof(f->clients.lock_owner));
		if (ew || el)
			goto out;
		f->clients.watchers = w;
		f->clients.lockers = l;
		*what &= ~RBD_ASK_CLIENTS;
	}
	if (*what & RBD_ASK_GRANULARITY) {
		f->granularity = e2t_rbd_dl_granularity(d);
		*what &= ~RBD_ASK_GRANULARITY;
	}
	/*
	 * rbd du --exact counts what the image holds since its last
	 * snapshot, without a clone's parent: the same walk when it has
	 * none; with snapshots the command counts it.  Without snapshots
	 * the own layer's map is that walk too (own_map()): walked once.
	 */
	if ((*what & RBD_ASK_USED) && !s->snap &&
	    !e2t_rbd_dl_snapshots(d, &snaps) && snaps == 0) {
		if (!e2t_rbd_dl_extents(d, NULL, 0, e2t_rbd_extent_add, &x)) {
			f->used_bytes = extents_bytes(&x);
			f->used_known = 1;
			*what &= ~RBD_ASK_USED;
			if (*what & RBD_ASK_MAP) {
				e2t_rbd_extents_to_map(&x, f);
				*what &= ~RBD_ASK_MAP;
			}
		}
		/* a walk that failed half way is not a map */
		free(x.d);
		memset(&x, 0, sizeof(x));
	}
	if ((*what & RBD_ASK_MAP) && !own_map(d, &x)) {
		e2t_rbd_extents_to_map(&x, f);
		*what &= ~RBD_ASK_MAP;
	}
	free(x.d);
out:
	if (*what & RBD_ASK_CLIENTS)	/* the command's answer, whole */
		memset(&f->clients, 0, sizeof(f->clients));
	if (d)
		e2t_rbd_dl_close_image(d);
}

errcode_t e2t_rbd_ask(struct rbd_spec *s, unsigned int what, struct rbd_facts *f,
		  char *why, size_t len)
{
	errcode_t err = 0;

	memset(f, 0, sizeof(*f));
	/* a snapshot's allocation map is not needed: it is never trimmed */
	if (s->snap)
		what &= ~RBD_ASK_MAP;
	ask_lib(s, &what, f);
	if (what)
		err = e2t_rbd_cmd_ask(s, what, f, why, len);
	/*
	 * qemu's block status counts a clone's parent and the snapshots'
	 * data as the image's: without its own layer's map nothing is
	 * trimmed rather than that
	 */
	if (!err && (what & RBD_ASK_MAP) && !f->map_known) {
		snprintf(why, len, "where the RBD image's own layer holds data "
			 "(without its parent or snapshots) could not be told "
			 "by librbd (librbd1) or the rbd command: nothing was "
			 "trimmed");
		err = E2TRIM_ERR_NBD_START;
	}
	if (err)
		e2t_rbd_facts_free(f);
	return err;
}

void e2t_rbd_facts_free(struct rbd_facts *f)
{
	free(f->data);
	f->data = NULL;
	f->ndata = 0;
	f->map_known = 0;
}

void e2t_rbd_spec_keep_map(struct rbd_spec *s, struct rbd_facts *f)
{
	free(s->data);
	s->data = f->data;
	s->ndata = f->ndata;
	s->map_known = f->map_known;
	f->data = NULL;
	e2t_rbd_facts_free(f);
}

int e2t_rbd_spec_data_map(const struct rbd_spec *s, const uint64_t (**map)[2],
		      size_t *n)
{
	*map = (const uint64_t (*)[2])s->data;
	*n = s->ndata;
	return s->map_known;
}
