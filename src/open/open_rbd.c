// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open_rbd.c - open a Ceph RBD image through librbd in the process
 *
 * An RBD image has no file and no qemu lock: a running VM, a kernel
 * mapping or a qemu-nbd is seen as a watcher of the image's header object
 * (`rbd status`), and the one writing holds the exclusive lock (`rbd lock
 * ls`).  librbd hands that lock to whoever asks for it, so a check at
 * open alone would let a VM start and write while e2trim trims from a
 * plan made before.  So:
 *  - an image with any watcher or locker is refused (26) before e2trim
 *    opens it at all;
 *  - every run opens it read-only first, and every gate and check (and
 *    verification) runs there: a refusal, like a dry run, writes nothing
 *    of the image (no header, no object map, no lock);
 *  - a real run that passed them checks that no client wrote the image
 *    since (its header object's version, rbd_io.c), reopens it
 *    read-write and takes the exclusive lock in the mode that is not
 *    handed over (rbd_io.c) at the stage boundary qemu-nbd's reopen
 *    used (open_nbd_writable());
 *    then e2trim must be its only client, the superblock and the group
 *    descriptors must read as at the first pass (a writer that came and
 *    went meanwhile is refused, 26), and the checks and verification run
 *    again under the lock, before the first discard; until close no
 *    other client can write it, and before each request the lock is
 *    checked to be still ours and the size unchanged.
 *
 * A snapshot is read-only in Ceph: a dry run reads it, a trim is refused.
 * What the image holds comes from Ceph's own accounting (rbd du --exact),
 * before and after.  Where it holds data comes from librbd's exact
 * extents (rbd diff).  librbd skips what a discard does not cover of each
 * aligned rbd_discard_granularity_bytes chunk (64 KiB by default): the
 * plan is cut inward to it, so that what is reported trimmed is freed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2trim_int.h"
#include "image_rbd.h"
#include "walk.h"
#include "open_rbd.h"
#include "rbd_io.h"

/* librbd's default, when `rbd config image list` cannot tell */
#define RBD_GRANULARITY_DEFAULT (64U << 10)

/* e2trim alone: one watcher at most, and a lock only in its hands. */
static int only_ours(const struct rbd_clients *c)
{
	return c->watchers <= 1 &&
	       (!c->lockers || (c->lockers == 1 &&
				!strcmp(c->locker, c->watcher)));
}

/*
 * A lock and nobody watching: no VM, mapping or qemu-nbd has the image
 * open (each watches it), so "stop it" would name nothing to stop.  It is
 * the lock of a client that was killed (librbd breaks it after about
 * 30 s, once it asks for the lock itself), or one taken by hand.  Whether
 * its owner is gone is a person's to know: the command, no backquotes.
 */
static errcode_t refuse_lock(struct e2trim *t, const struct rbd_clients *c)
{
	char id[sizeof(c->lock_id) + 16], owner[sizeof(c->lock_owner) + 16];
	char name[DETAIL_LEN / 4];

	lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "the RBD image is locked by %s "
		 "(%s), but no client watches it: the lock of a client that "
		 "was killed, or one taken with rbd lock add", c->locker,
		 c->lock_owner);
	lib_shell_quote(e2t_rbd_spec_name(t->rbd), name, sizeof(name));
	lib_shell_quote(c->lock_id, id, sizeof(id));
	lib_shell_quote(c->lock_owner, owner, sizeof(owner));
	lib_fix(t, E2TRIM_ERR_IMAGE_LOCKED, "once you know that its owner is "
		"gone, remove the lock (e2trim never breaks one): rbd lock rm "
		"%s %s %s, then run e2trim again", name, id, owner);
	return E2TRIM_ERR_IMAGE_LOCKED;
}

/* Refuse an image with clients (@ours: e2trim's own handle may be one). */
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
	if (!c->watchers && c->lock_id[0] && c->lock_owner[0])
		return refuse_lock(t, c);
	return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "the RBD image is in use: "
			"watched by %s%s%s; a running VM, a kernel mapping "
			"(rbd showmapped) or a qemu-nbd has it open: stop it, "
			"then run again (e2trim never breaks a lock)",
			c->watchers ? c->watcher : "nobody",
			c->lockers ? ", locked by " : "",
			c->lockers ? c->locker : "");
}

/* Who has it open now: nobody but e2trim's own handle (@ours). */
static errcode_t recheck_clients(struct e2trim *t, int ours)
{
	struct rbd_facts f;
	char why[512];

	if (e2t_rbd_ask(t->rbd, RBD_ASK_CLIENTS, &f, why, sizeof(why)))
		return lib_fail(t, E2TRIM_ERR_RBD_OPEN, "%s", why);
	return refuse_clients(t, &f.clients, ours);
}

/* Still ours as at open: the lock, the size, the features, the header. */
static errcode_t recheck_image(struct e2trim *t)
{
	errcode_t err = e2t_rbd_io_recheck(t->rbd_io);

	if (err == ENOLCK)
		return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "e2trim lost the "
				"RBD image's exclusive lock (broken with rbd "
				"lock rm, or this client was blocklisted): "
				"nothing further is trimmed; run again once "
				"no other client has the image open");
	if (err == ERANGE)
		return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "the RBD image was "
				"resized while e2trim had it open: nothing "
				"further is trimmed; run again");
	if (err == ESTALE) {
		lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "%s: nothing further is "
			 "trimmed", OPEN_RBD_CHANGED);
		lib_fix(t, E2TRIM_ERR_IMAGE_LOCKED, "%s", OPEN_RBD_CHANGED_FIX);
		return E2TRIM_ERR_IMAGE_LOCKED;
	}
	if (err)
		return lib_fail_cause(t, E2TRIM_ERR_RBD_OPEN, err,
				      "librbd: while asking the image's size");
	return 0;
}

errcode_t open_rbd_recheck(struct e2trim *t)
{
	errcode_t err;

	if (!t->rbd_io)
		return 0;
	/*
	 * who has it first: a lock taken by another client is named as
	 * such, before the header's version (which any lock changes) says
	 * only that something changed
	 */
	err = recheck_clients(t, 1);
	if (!err)
		err = recheck_image(t);
	return err;
}

int open_rbd_allocated(const struct e2trim *t, uint64_t *bytes)
{
	struct rbd_facts f;
	char why[512];

	/* a cluster that did not answer would not answer this either */
	if (t->rbd_io && e2t_rbd_io_stuck(t->rbd_io))
		return 0;
	if (!t->rbd || e2t_rbd_ask(t->rbd, RBD_ASK_USED, &f, why, sizeof(why)) ||
	    !f.used_known)
		return 0;
	*bytes = f.used_bytes;
	return 1;
}

/* A snapshot cannot be written: only a dry run reads it. */
static errcode_t check_snap(struct e2trim *t)
{
	if (!e2t_rbd_spec_is_snap(t->rbd) || t->opt.dryrun)
		return 0;
	return lib_fail(t, E2TRIM_ERR_USAGE, "an RBD snapshot is read-only: "
			"give -n to see what its filesystem has free, or "
			"name the image without @SNAP to trim it");
}

/*
 * A cephx key that may read the pool but not write it: every check ran
 * (read-only), the writable open or the lock was refused EPERM.  Not
 * "check that the cluster answers": it did, and said no.
 */
static errcode_t no_write(struct e2trim *t, const char *why)
{
	char pool[DETAIL_LEN / 4], user[96];
	const char *name = e2t_rbd_spec_name(t->rbd);

	snprintf(pool, sizeof(pool), "%.*s", (int)strcspn(name, "/"), name);
	snprintf(user, sizeof(user), "client.%s", e2t_rbd_spec_id(t->rbd));
	lib_fail(t, E2TRIM_ERR_RBD_OPEN, "the cephx key of %s may read pool "
		 "%s but lacks write permission on it (%s); nothing was "
		 "trimmed", user, pool, why);
	lib_fix(t, E2TRIM_ERR_RBD_OPEN, "give %s write caps on the pool (ceph "
		"auth caps %s mon 'profile rbd' osd 'profile rbd pool=%s'), "
		"or use a key that has them; -n needs read permission only",
		user, user, pool);
	return E2TRIM_ERR_RBD_OPEN;
}

/* e2t_rbd_io_open()'s or e2t_rbd_io_lock()'s failure, in the table's terms. */
static errcode_t io_failed(struct e2trim *t, enum rbd_io_fail rc,
			   const char *why)
{
	switch (rc) {
	case RBD_IO_OK:
		return 0;
	case RBD_IO_NO_MEMORY:
		return lib_fail(t, E2TRIM_ERR_NO_MEMORY, NULL);
	case RBD_IO_NO_LIBRBD:
		return lib_fail(t, E2TRIM_ERR_NO_LIBRBD, "%s", why);
	case RBD_IO_NO_LOCK_FEATURE:
		return lib_fail(t, E2TRIM_ERR_USAGE, "the RBD image lacks the "
				"exclusive-lock feature, so e2trim cannot keep "
				"other clients from writing while it trims; "
				"enable it (rbd feature enable POOL/IMAGE "
				"exclusive-lock), or give -n");
	case RBD_IO_LOCK_HELD:
		return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "%s", why);
	case RBD_IO_STOPPED:
		return lib_interrupted(t);
	case RBD_IO_NO_WRITE:
		return no_write(t, why);
	default:
		return lib_fail(t, E2TRIM_ERR_RBD_OPEN, "%s", why);
	}
}

/*
 * Everything asked of librbd (or the rbd command) before the image is
 * opened: who has it open (not for a snapshot, which never changes: a
 * VM on its image does not matter), librbd's granularity, rbd du, and
 * where the image holds data.
 */
static errcode_t ask_all(struct e2trim *t)
{
	unsigned int what = RBD_ASK_GRANULARITY | RBD_ASK_USED | RBD_ASK_MAP;
	int snap = e2t_rbd_spec_is_snap(t->rbd);
	struct rbd_facts f;
	char why[512];
	errcode_t err;

	if (!snap)
		what |= RBD_ASK_CLIENTS;
	if (e2t_rbd_ask(t->rbd, what, &f, why, sizeof(why)))
		return lib_fail(t, E2TRIM_ERR_RBD_OPEN, "%s", why);
	err = snap ? 0 : refuse_clients(t, &f.clients, 0);
	if (err) {
		e2t_rbd_facts_free(&f);
		return err;
	}
	t->cluster_bytes = f.granularity ? f.granularity :
					   RBD_GRANULARITY_DEFAULT;
	if (f.used_known) {
		t->res.allocated_before_bytes = f.used_bytes;
		t->res.allocated_after_bytes = f.used_bytes;
		t->res.allocated_known = 1;
	}
	e2t_rbd_spec_keep_map(t->rbd, &f);
	return 0;
}

/*
 * The image opened read-only before anything of the filesystem is read,
 * in a real run too: nothing a refusal leaves behind (open_rbd_writable()
 * opens it for trimming).
 */
static errcode_t open_image(struct e2trim *t)
{
	char why[512] = "";
	enum rbd_io_fail rc;

	rc = e2t_rbd_io_open(t->rbd, 1, &t->rbd_io, why, sizeof(why));
	t->size_bytes = rc ? 0 : e2t_rbd_io_size(t->rbd_io);
	return io_failed(t, rc, why);
}

/*
 * The group descriptors as they read now, byte for byte against those
 * the checks used: libext2fs keeps them as read in group_desc (swapped
 * on a big-endian host, where the superblock alone is compared).
 */
static int same_descriptors(struct e2trim *t)
{
	ext2_filsys fs = t->fs;
	unsigned char *buf;
	blk64_t blk;
	dgrp_t i;
	int same = 1;

	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__ || !fs->group_desc)
		return 1;
	buf = malloc(fs->blocksize);
	if (!buf)
		return 0;
	for (i = 0; same && i < fs->desc_blocks; i++) {
		blk = fs_desc_block(fs, i);
		same = !io_channel_read_blk64(fs->io, blk, 1, buf) &&
		       !memcmp(buf, (char *)fs->group_desc +
			       (size_t)i * fs->blocksize, fs->blocksize);
	}
	free(buf);
	return same;
}

/*
 * What the checks read at open, read again under the lock: the
 * superblock (libext2fs keeps its bytes as read in orig_super), then
 * the descriptors.  A writer that came and went left its mark there.
 */
static int same_metadata(struct e2trim *t)
{
	unsigned char sb[SUPERBLOCK_SIZE];

	if (!t->fs->orig_super ||
	    e2t_rbd_io_pread(t->rbd_io, sb, sizeof(sb), t->offset_bytes + 1024) ||
	    memcmp(sb, t->fs->orig_super, sizeof(sb)))
		return 0;
	return same_descriptors(t);
}

errcode_t open_rbd_writable(struct e2trim *t)
{
	char why[512] = "";
	enum rbd_io_fail rc;
	errcode_t err;

	if (!t->rbd_io || e2t_rbd_spec_is_snap(t->rbd))
		return 0;
	rc = e2t_rbd_io_reopen(t->rbd_io, t->rbd, why, sizeof(why));
	/* a stop ends e2trim's own wait for the lock */
	e2t_rbd_io_set_stop(t->rbd_io, t->cancel);
	if (!rc)
		rc = e2t_rbd_io_lock(t->rbd_io, why, sizeof(why));
	err = io_failed(t, rc, why);
	/* the lock ours, the size as at open, nobody else's watch beside */
	if (!err)
		err = open_rbd_recheck(t);
	if (!err && t->fs && !same_metadata(t))
		err = lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "the filesystem "
			       "changed while e2trim checked the RBD image "
			       "(another client wrote it before e2trim took "
			       "its lock); nothing was trimmed: run again "
			       "once no other client has the image open");
	return err;
}

errcode_t open_rbd(struct e2trim *t)
{
	struct rbd_dl *d;
	char why[512] = "";
	errcode_t err;

	if (e2t_rbd_spec_parse(t->path, &t->rbd, why, sizeof(why)))
		return lib_fail(t, E2TRIM_ERR_USAGE, "%s", why);
	err = check_snap(t);
	if (err)
		return err;
	/* the image is read through librbd: without it, nothing can be */
	err = e2t_rbd_spec_connect(t->rbd, &d, why, sizeof(why));
	if (err == ELIBACC)
		return lib_fail(t, E2TRIM_ERR_NO_LIBRBD, "%s", why);
	if (err)
		return lib_fail(t, E2TRIM_ERR_RBD_OPEN, "%s", why);
	err = ask_all(t);
	if (err)
		return err;
	snprintf(t->res.image_format, sizeof(t->res.image_format), "rbd");
	return open_image(t);
}

void open_rbd_release(struct e2trim *t)
{
	const char *cookie, *owner;
	char name[DETAIL_LEN / 4], id[160], who[80];
	errcode_t err;

	if (!t->rbd_io)
		return;
	err = e2t_rbd_io_release(t->rbd_io, &cookie, &owner);
	if (!err)
		return;
	if (!cookie) {
		lib_warn(t, "e2trim could not release the RBD image's "
			 "exclusive lock (%s): see rbd lock ls %s",
			 strerror((int)err), e2t_rbd_spec_name(t->rbd));
		return;
	}
	lib_shell_quote(e2t_rbd_spec_name(t->rbd), name, sizeof(name));
	lib_shell_quote(cookie, id, sizeof(id));
	lib_shell_quote(owner, who, sizeof(who));
	lib_warn(t, "e2trim could not release its exclusive lock on the RBD "
		 "image (%s: the cluster does not answer); once it does, and "
		 "this e2trim has exited, remove it: rbd lock rm %s %s %s",
		 strerror((int)err), name, id, who);
}

int open_rbd_data_map(const struct e2trim *t, const uint64_t (**map)[2],
		      size_t *n)
{
	return t->rbd && e2t_rbd_spec_data_map(t->rbd, map, n);
}

void open_rbd_close(struct e2trim *t)
{
	/* the lock first: nothing of ours is left held, whatever stopped */
	e2t_rbd_io_close(t->rbd_io);
	t->rbd_io = NULL;
	e2t_rbd_spec_free(t->rbd);
	t->rbd = NULL;
}
