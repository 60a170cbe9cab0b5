// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open_rbd.c - open a Ceph RBD image through qemu-nbd's rbd driver
 *
 * An RBD image has no file and no qemu lock a second qemu-nbd would trip
 * over: a running VM, a kernel mapping or another qemu-nbd is seen as a
 * watcher of the image's header object (`rbd status`), and the one
 * writing holds the exclusive lock (`rbd lock ls`).  librbd hands that
 * lock over to whoever asks for it, so writing beside a VM would not
 * fail: it would take the lock from the VM.  So an image with any
 * watcher or locker is refused before qemu-nbd starts, and again before
 * the first discard, when our own server is the only watcher allowed.
 *
 * A snapshot is read-only in Ceph: a dry run reads it, a trim is refused.
 * What the image holds comes from Ceph's own accounting (rbd du --exact),
 * before and after.  Where it holds data comes from librbd's exact
 * extents (rbd diff): qemu's block status says whole 4 MiB objects, so a
 * second run would trim again every free extent of an object that holds
 * data.  librbd skips what a discard does not cover of each aligned
 * rbd_discard_granularity_bytes chunk (64 KiB by default): the plan is
 * cut inward to it, so that what is reported trimmed is freed.
 */
#include <stdio.h>
#include <string.h>

#include "e2trim_int.h"
#include "image_rbd.h"
#include "nbd_io.h"
#include "open_rbd.h"

/* librbd's default, when `rbd config image list` cannot tell */
#define RBD_GRANULARITY_DEFAULT (64U << 10)

/*
 * Our own server alone: one watcher, and a lock only in its hands (qemu
 * takes the exclusive lock when it opens an image for writing).
 */
static int only_ours(const struct rbd_clients *c)
{
	return c->watchers <= 1 &&
	       (!c->lockers || (c->lockers == 1 &&
				!strcmp(c->locker, c->watcher)));
}

/* Refuse an image with clients (@ours: e2trim's own server may be one). */
static errcode_t refuse_clients(struct e2trim *t, const struct rbd_clients *c,
				int ours)
{
	if (ours ? only_ours(c) : !c->watchers && !c->lockers)
		return 0;
	if (ours)
		return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "another client "
				"opened the RBD image while e2trim checked it "
				"(watchers: %s; lockers: %s); nothing was "
				"trimmed: stop it, then run again",
				c->watcher, c->lockers ? c->locker : "none");
	return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "the RBD image is in use: "
			"watched by %s%s%s; a running VM, a kernel mapping "
			"(rbd showmapped) or a qemu-nbd has it open: stop it, "
			"then run again (e2trim never breaks a lock)",
			c->watchers ? c->watcher : "nobody",
			c->lockers ? ", locked by " : "",
			c->lockers ? c->locker : "");
}

errcode_t open_rbd_recheck(struct e2trim *t, int ours)
{
	struct rbd_facts f;
	char why[512];

	if (rbd_ask(t->rbd, RBD_ASK_CLIENTS, &f, why, sizeof(why)))
		return lib_fail(t, E2TRIM_ERR_NBD_START, "%s", why);
	return refuse_clients(t, &f.clients, ours);
}

uint64_t open_rbd_allocated(const struct e2trim *t)
{
	struct rbd_facts f;
	char why[512];

	if (!t->rbd || rbd_ask(t->rbd, RBD_ASK_USED, &f, why, sizeof(why)) ||
	    !f.used_known)
		return 0;
	return f.used_bytes;
}

/* A snapshot cannot be written: only a dry run reads it. */
static errcode_t check_snap(struct e2trim *t)
{
	if (!rbd_spec_is_snap(t->rbd) || t->opt.dryrun)
		return 0;
	return lib_fail(t, E2TRIM_ERR_USAGE, "an RBD snapshot is read-only: "
			"give -n to see what its filesystem has free, or "
			"name the image without @SNAP to trim it");
}

static errcode_t start_server(struct e2trim *t)
{
	char why[512] = "";
	enum nbd_open_fail rc;

	/* read-only until the gates and the verification have passed */
	rc = nbd_conn_open_image(&t->nbd, rbd_spec_qemu_name(t->rbd), "rbd", 1,
				 why, sizeof(why));
	if (rc == NBD_OPEN_NO_MEMORY)
		return lib_fail(t, E2TRIM_ERR_NO_MEMORY, NULL);
	if (rc == NBD_OPEN_NO_LIBNBD)
		return lib_fail(t, E2TRIM_ERR_NO_LIBNBD, "%s", why);
	if (rc && strstr(why, "Unknown protocol"))
		return lib_fail(t, E2TRIM_ERR_NBD_START, "%s: install "
				"qemu-block-extra (qemu's rbd driver)", why);
	if (rc)
		return lib_fail(t, E2TRIM_ERR_NBD_START, "%s", why);
	t->size_bytes = t->nbd->srv.size_bytes;
	t->nbd_reopen = !t->opt.dryrun;
	return 0;
}

/*
 * Everything asked of librbd (or the rbd command) before qemu-nbd starts:
 * who has the image open (not for a snapshot, which never changes: a VM
 * on its image does not matter), librbd's granularity, rbd du, and where
 * the image holds data.
 */
static errcode_t ask_all(struct e2trim *t)
{
	unsigned int what = RBD_ASK_GRANULARITY | RBD_ASK_USED | RBD_ASK_MAP;
	int snap = rbd_spec_is_snap(t->rbd);
	struct rbd_facts f;
	char why[512];
	errcode_t err;

	if (!snap)
		what |= RBD_ASK_CLIENTS;
	if (rbd_ask(t->rbd, what, &f, why, sizeof(why)))
		return lib_fail(t, E2TRIM_ERR_NBD_START, "%s", why);
	err = snap ? 0 : refuse_clients(t, &f.clients, 0);
	if (err) {
		rbd_facts_free(&f);
		return err;
	}
	t->cluster_bytes = f.granularity ? f.granularity :
					   RBD_GRANULARITY_DEFAULT;
	if (f.used_known) {
		t->res.allocated_before_bytes = f.used_bytes;
		t->res.allocated_after_bytes = f.used_bytes;
		t->res.allocated_known = 1;
	}
	rbd_spec_keep_map(t->rbd, &f);
	return 0;
}

errcode_t open_rbd(struct e2trim *t)
{
	char why[512];
	errcode_t err;

	if (rbd_spec_parse(t->path, &t->rbd, why, sizeof(why)))
		return lib_fail(t, E2TRIM_ERR_USAGE, "%s", why);
	err = check_snap(t);
	if (!err)
		err = ask_all(t);
	if (err)
		return err;
	snprintf(t->res.image_format, sizeof(t->res.image_format), "rbd");
	err = start_server(t);
	if (!err)
		t->nbd->has_data_map = rbd_spec_data_map(t->rbd,
				&t->nbd->data_map, &t->nbd->data_map_n);
	return err;
}

const char *open_rbd_qemu_name(const struct e2trim *t)
{
	return rbd_spec_qemu_name(t->rbd);
}

void open_rbd_close(struct e2trim *t)
{
	rbd_spec_free(t->rbd);
	t->rbd = NULL;
}
