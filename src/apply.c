// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * apply.c - the stages after open: verify, plan, trim; and the handle
 *
 * Each call runs what must come before it and has not run yet, so a
 * caller cannot trim a filesystem whose gates or verification did not
 * pass.  Verification and the plan read the free runs the gates' bitmap
 * check kept (bitmap_stream.c); apply_walk.c walks the plan extent by
 * extent.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "apply_walk.h"
#include "e2trim_int.h"
#include "open.h"
#include "open_hold.h"
#include "open_paths.h"
#include "open_nbd.h"
#include "open_rbd.h"
#include "open_witness.h"
#include "target.h"
#include "verify.h"

const char *e2trim_version(unsigned int *major, unsigned int *minor,
			   unsigned int *patch)
{
	unsigned int n[3] = { 0, 0, 0 };

	sscanf(E2TRIM_VERSION, "%u.%u.%u", &n[0], &n[1], &n[2]);
	if (major)
		*major = n[0];
	if (minor)
		*minor = n[1];
	if (patch)
		*patch = n[2];
	return E2TRIM_VERSION;
}

errcode_t e2trim_new(struct e2trim **out)
{
	struct e2trim *t;

	lib_register_error_tables();
	if (!out)
		return E2TRIM_ERR_INVALID_ARGUMENT;
	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return E2TRIM_ERR_NO_MEMORY;
	t->fd = -1;
	t->image_fd = -1;
	t->backing_fd = -1;
	t->range.len_bytes = UINT64_MAX;
	lib_reset_result(t);
	*out = t;
	return 0;
}

void e2trim_free(struct e2trim *t)
{
	if (!t)
		return;
	open_close(t);
	free(t->path);
	free(t->opt.format);
	free(t->parts);
	free(t);
}

void e2trim_set_cancel(struct e2trim *t, const volatile sig_atomic_t *flag)
{
	if (t)
		t->cancel = flag;
}

const struct e2trim_result *e2trim_result(const struct e2trim *t)
{
	return t ? &t->res : NULL;
}

const struct e2trim_histogram *e2trim_histogram(const struct e2trim *t)
{
	return t ? &t->hist : NULL;
}

void e2trim_set_progress(struct e2trim *t, e2trim_progress_fn fn, void *priv)
{
	if (!t)
		return;
	t->progress = fn;
	t->progress_priv = priv;
}

errcode_t e2trim_verify(struct e2trim *t)
{
	struct plan_source src;
	errcode_t err;

	if (!t)
		return E2TRIM_ERR_INVALID_ARGUMENT;
	err = e2trim_check(t);
	if (err || t->verified || t->opt.no_verify)
		return err;
	bitmap_stream_source(t->stream, &src);
	err = verify_free_space(t, &src, &t->geo);
	if (!err)
		t->verified = 1;
	/* a writer since open: named when still there (10), else its trace (26) */
	return open_paths_in_use_first(t, err);
}

/* FITRIM's rules: the range must start inside and span a whole block. */
errcode_t e2trim_set_range(struct e2trim *t, uint64_t start_bytes,
			   uint64_t len_bytes, uint64_t minlen_bytes)
{
	struct plan_range range = { start_bytes, len_bytes, minlen_bytes };
	struct plan_blocks blk;

	if (!t)
		return E2TRIM_ERR_INVALID_ARGUMENT;
	if (!t->fs)
		return lib_fail(t, E2TRIM_ERR_BAD_CALL, NULL);
	if (!plan_check_range(&t->geo, &range, &blk)) {
		t->range = range;
		t->res.range_start_bytes = start_bytes;
		t->res.range_len_bytes = len_bytes;
		t->res.range_minlen_bytes = minlen_bytes;
		t->res.minlen_applied_bytes = minlen_bytes;
		return 0;
	}
	if (range.len_bytes < t->geo.block_size)
		return lib_fail(t, E2TRIM_ERR_RANGE_SHORT,
				"length must be at least one block (%" PRIu32
				" bytes)", t->geo.block_size);
	return lib_fail(t, E2TRIM_ERR_RANGE_OUTSIDE,
			"offset %" PRIu64 " is not inside the filesystem (%"
			PRIu64 " bytes)", range.start_bytes,
			t->geo.blocks_count * t->geo.block_size);
}

errcode_t e2trim_plan(struct e2trim *t, e2trim_extent_fn fn, void *priv)
{
	struct apply_walk w = { t, NULL, fn, priv, 0 };
	errcode_t err;

	if (!t)
		return E2TRIM_ERR_INVALID_ARGUMENT;
	err = e2trim_verify(t);
	if (err)
		return err;
	err = apply_walk_run(t, &w);
	if (err == E2TRIM_ERR_INTERRUPTED)
		return lib_interrupted(t);
	if (err)
		return lib_fail_cause(t, E2TRIM_ERR_SCAN, err, NULL);
	return 0;
}

/*
 * The caller's mode as the target family names it: the library's public
 * enum stays out of the layer below.  E2TRIM_ERR_BAD_CALL for a value
 * that is no mode.
 */
static errcode_t trim_mode_of(enum e2trim_mode m, enum trim_mode *out)
{
	switch (m) {
	case E2TRIM_DISCARD:
		*out = TRIM_DISCARD;
		return 0;
	case E2TRIM_SECURE:
		*out = TRIM_SECURE;
		return 0;
	case E2TRIM_ZEROOUT:
		*out = TRIM_ZEROOUT;
		return 0;
	case E2TRIM_ZERO_FILL:
		*out = TRIM_ZERO_FILL;
		return 0;
	}
	return E2TRIM_ERR_BAD_CALL;
}

/* An RBD image: librbd's discards, its own map of where it holds data. */
static errcode_t rbd_target(struct e2trim *t, struct target *tg,
			    enum trim_mode mode)
{
	/* known and empty (a fresh clone): it holds nothing of its own */
	static const uint64_t none[1][2];
	const uint64_t (*map)[2] = NULL;
	size_t n = 0;

	if (!open_rbd_data_map(t, &map, &n))
		map = NULL;
	else if (!map)
		map = none;
	return target_rbd_init(tg, t->rbd_io, t->cluster_bytes, map, n, mode);
}

static errcode_t open_target(struct e2trim *t, struct target *tg)
{
	enum trim_mode mode;
	errcode_t rc;

	memset(tg, 0, sizeof(*tg));
	if (trim_mode_of(t->opt.mode, &mode))
		return lib_fail(t, E2TRIM_ERR_BAD_CALL, "no such mode: %u",
				(unsigned int)t->opt.mode);
	tg->name = t->path;
	tg->dryrun = t->opt.dryrun;
	tg->base_bytes = t->offset_bytes;
	tg->stop = t->cancel;
	if (open_nbd_frees_nothing(t) && t->opt.mode == E2TRIM_ZERO_FILL)
		return lib_fail(t, E2TRIM_ERR_USAGE, "--zero-fill works on "
				"devices and raw images, and nothing can be "
				"freed in this image: qemu drops every discard "
				"on a compat=0.10 qcow2 over a backing file; "
				"upgrade it with qemu-img amend -f qcow2 -o "
				"compat=1.1, then trim it without --zero-fill");
	/* freed clusters of a VM image read as zeros: trim, no need to fill */
	if ((t->nbd || t->rbd_io) && t->opt.mode == E2TRIM_ZERO_FILL)
		return lib_fail(t, E2TRIM_ERR_USAGE, "--zero-fill works on "
				"devices and raw images; give a VM image or NBD "
				"export without it: what e2trim frees there reads "
				"as zeros");
	if (t->rbd_io)
		rc = rbd_target(t, tg, mode);
	else if (t->nbd)
		rc = target_nbd_init(tg, t->nbd, t->cluster_bytes, mode);
	else if (t->is_blkdev)
		rc = target_blkdev_init(tg, t->fd, mode);
	else
		rc = target_file_init(tg, t->fd, mode);
	if (rc == EOPNOTSUPP)
		return lib_fail(t, t->opt.mode == E2TRIM_SECURE && !t->is_blkdev ?
				E2TRIM_ERR_SECURE_FILE : E2TRIM_ERR_UNSUPPORTED,
				NULL);
	if (rc)
		return lib_fail_cause(t, E2TRIM_ERR_LIMITS, rc, NULL);
	t->res.granularity_bytes = tg->lim.granularity;
	t->res.alignment_bytes = tg->lim.align_offset;
	t->res.max_request_bytes = tg->lim.max_bytes;
	/*
	 * Nothing shorter than the granularity can be freed: in effect the
	 * minimum is raised to it.  The target's inward alignment drops such
	 * extents (and counts them).
	 */
	if (t->range.minlen_bytes < tg->lim.granularity &&
	    tg->lim.granularity > t->geo.block_size)
		t->res.minlen_applied_bytes = tg->lim.granularity;
	return 0;
}

/*
 * An RBD image that stopped being ours as it was (target_rbd.c checks
 * before each request): nothing further was sent.  A lost lock is the
 * cluster's failure as often as another client's doing (librbd gives it
 * up when its watch fails: an OSD or a monitor stopped answering), so it
 * is an error; a new size is another client's doing, a refusal.
 */
static errcode_t rbd_lost(struct e2trim *t, const struct target *tg)
{
	t->cause = tg->error;
	if (tg->error == ERANGE)
		return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "the RBD image was "
				"resized while e2trim trimmed it: nothing was "
				"sent from byte %" PRIu64 " on; run again",
				tg->error_start);
	if (tg->error == ESTALE) {
		lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "%s: nothing was sent "
			 "from byte %" PRIu64 " on", OPEN_RBD_CHANGED,
			 tg->error_start);
		lib_fix(t, E2TRIM_ERR_IMAGE_LOCKED, "%s", OPEN_RBD_CHANGED_FIX);
		return E2TRIM_ERR_IMAGE_LOCKED;
	}
	lib_fail(t, E2TRIM_ERR_DISCARD, "librbd lost the RBD image's "
		 "exclusive lock (its watch failed: an OSD or monitor stopped "
		 "answering, or the lock was broken with rbd lock rm): "
		 "nothing was sent from byte %" PRIu64 " on",
		 tg->error_start);
	return E2TRIM_ERR_DISCARD;
}

/*
 * The first request was refused as a kind the target does not do: the
 * fix is another mode, the one that works on what it is.  An image on a
 * host filesystem that cannot punch holes (ramfs) takes --zero-fill,
 * which writes zeroes only over free space that is not zero already.
 */
static errcode_t unsupported_fix(struct e2trim *t, int mode)
{
	const errcode_t code = E2TRIM_ERR_DISCARD_UNSUPPORTED;

	if (mode == TRIM_SECURE)
		lib_fix(t, code, "it cannot discard securely; run e2trim "
			"again without --secure");
	else if (mode == TRIM_ZEROOUT)
		lib_fix(t, code, "it cannot zero out; run e2trim again "
			"without --zeroout");
	else if (!t->is_blkdev && !t->nbd && !t->rbd)
		lib_fix(t, code, "the filesystem that holds the image cannot "
			"punch holes (ramfs does not); run e2trim again with "
			"--zero-fill, which writes zeroes over the free space "
			"that is not zero already");
	else
		lib_fix(t, code, "it cannot discard; run e2trim again with "
			"--zeroout to write zeroes instead");
	return code;
}

/* A run that stopped before the end: why, in the table's terms. */
static errcode_t stopped(struct e2trim *t, const struct target *tg)
{
	static const char *const op[] = {
		[TRIM_DISCARD] = "discard", [TRIM_SECURE] = "secure discard",
		[TRIM_ZEROOUT] = "zeroout", [TRIM_ZERO_FILL] = "zero-fill",
	};
	char msg[128];

	/* an RBD image: nothing of ours left on it, or the command to */
	open_rbd_release(t);
	if (!tg->error)
		return lib_interrupted(t);
	if (t->rbd_io && (tg->error == ENOLCK || tg->error == ERANGE ||
			  tg->error == ESTALE))
		return rbd_lost(t, tg);
	lib_fail(t, E2TRIM_ERR_DISCARD, "%s at byte %" PRIu64 " failed: %s",
		 op[tg->mode], tg->error_start,
		 strerror_r((int)tg->error, msg, sizeof(msg)));
	t->cause = tg->error;
	if (tg->mode == TRIM_ZERO_FILL)
		return E2TRIM_ERR_ZERO_FILL;
	if (tg->error == EOPNOTSUPP && tg->stats.requests == 0)
		return unsupported_fix(t, tg->mode);
	return E2TRIM_ERR_DISCARD;
}

/*
 * After apply: the run's wall time, and what the image file occupies now
 * (the host frees punched blocks at once: st_blocks says it).
 */
static void take_after(struct e2trim *t)
{
	struct timespec now;
	struct stat st;

	clock_gettime(CLOCK_MONOTONIC, &now);
	t->res.seconds = (double)(now.tv_sec - t->opened.tv_sec) +
			 (now.tv_nsec - t->opened.tv_nsec) / 1e9;
	if (t->res.allocated_known && t->rbd) {
		/* what Ceph counts now; unknown when it cannot tell */
		if (!open_rbd_allocated(t, &t->res.allocated_after_bytes)) {
			t->res.allocated_after_bytes = 0;
			t->res.allocated_known = E2TRIM_ALLOCATED_BEFORE_ONLY;
		}
		return;
	}
	if (t->res.allocated_known && t->nbd) {
		/* a VM image: its own file (and a qcow2's data file) */
		t->res.allocated_after_bytes = open_nbd_allocated(t);
		return;
	}
	if (t->res.allocated_known && t->fd >= 0 && !fstat(t->fd, &st))
		t->res.allocated_after_bytes = (uint64_t)st.st_blocks * 512;
}

/*
 * An RBD image was read read-only until open_nbd_writable() locked it
 * (open_rbd.c): what the plan rests on (bitmaps, verification) is read
 * and checked again under the lock, so that nothing a client wrote
 * before it is lost to a discard.  Verifying an RBD image is cheap next
 * to its trim.
 */
static errcode_t recheck_locked(struct e2trim *t)
{
	if (!t->rbd_io)
		return 0;
	bitmap_stream_close(t->stream);
	t->stream = NULL;
	t->checked = 0;
	t->verified = 0;
	return e2trim_verify(t);
}

errcode_t e2trim_apply(struct e2trim *t, e2trim_extent_fn fn, void *priv)
{
	struct target tg;
	struct apply_walk w = { t, &tg, fn, priv, 0 };
	struct apply_walk_progress ap;
	errcode_t err, ret = 0;

	if (!t)
		return E2TRIM_ERR_INVALID_ARGUMENT;
	err = e2trim_verify(t);
	/* before the target is opened: a refusal must trim nothing */
	if (!err)
		err = open_target(t, &tg);
	if (err)
		return err;
	/* qemu would answer each discard "done": send none, count none */
	if (open_nbd_frees_nothing(t)) {
		target_close(&tg);
		take_after(t);
		return 0;
	}
	/*
	 * A VM image was read read-only so far, so that no refusal, the
	 * target's (--zero-fill, --secure) included, changed it.
	 */
	err = tg.dryrun ? 0 : open_nbd_writable(t);
	if (!err && !tg.dryrun)
		err = recheck_locked(t);
	/*
	 * an RBD image: nobody but e2trim, the lock and the image as they
	 * were, once more after that verification, right before the first
	 * discard (another client's lock taken meanwhile is named)
	 */
	if (!err && !tg.dryrun)
		err = open_rbd_recheck(t);
	if (!err)
		err = apply_walk_progress_start(t, &tg, &ap);
	/*
	 * Verification took a while: a loop device attached meanwhile (and
	 * mounted through it) would write into what is about to be freed.
	 */
	if (!err && !tg.dryrun)
		err = recheck_loop_devices(t);
	/* and a program that opened its bytes for writing, a FUSE mount */
	if (!err && !tg.dryrun)
		err = open_paths_recheck(t);
	/* ... or came and went: the bytes the plan rests on, read again */
	if (!err && !tg.dryrun)
		err = witness_look(t);
	if (err) {
		target_close(&tg);
		return err;
	}
	err = apply_walk_run(t, &w);
	/* requests still in flight finish, whatever stopped the plan */
	target_finish(&tg);
	apply_walk_stats(&t->res, &tg);
	if (!err && !tg.error && t->progress)
		lib_progress(t, ap.stage, ap.total, ap.total);
	if (w.refused)
		ret = w.refused;
	else if (err == E2TRIM_ERR_INTERRUPTED || tg.error)
		ret = stopped(t, &tg);
	else if (err)
		ret = lib_fail_cause(t, E2TRIM_ERR_SCAN, err, NULL);
	target_close(&tg);
	take_after(t);
	return ret;
}
