// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open_data_file.c - open: a qcow2's external data file must be its own
 *
 * A qcow2 whose header names an external data file keeps each cluster it
 * allocates at the same offset in that file (qemu maps guest offset to
 * data-file offset one to one), and the data file holds nothing else.
 * The gates of a named file (open_chain.c: regular, plain name, same
 * owner, not attached) do not see whose bytes the file holds: one VM's
 * qcow2 can name another VM's raw disk of the same owner, and every
 * trim through it punches that disk.  So before a byte is discarded, the
 * data file's data (SEEK_DATA / SEEK_HOLE) is held against what the
 * qcow2 allocates (the NBD connection's block status of the image e2trim
 * already serves: qemu:allocation-depth 1, the image's own layer, else
 * base:allocation's data): data where the qcow2 allocates nothing, or
 * past its virtual size, is not the image's, and the image is refused.
 * (A data_file_raw=on image allocates every cluster when it is made
 * (qemu preallocates its metadata): its data file can never be told from
 * another disk this way, nor need it: qemu itself reads that file as the
 * image's whole disk.)
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libnbd.h>

#include "e2trim_int.h"
#include "nbd_dl.h"
#include "nbd_io.h"
#include "open_data_file.h"

/* as target_nbd.c asks: at most 1 GiB of block status a request */
#define STATUS_MAX (1ULL << 30)

/* What a block status reply says of a data segment of the data file. */
struct own_walk {
	uint64_t covered;	/* answered up to here */
	uint64_t foreign;	/* first byte the qcow2 does not allocate, */
	int found;		/* ... if found */
	int depth;		/* the server answers allocation-depth */
};

static int own_extent(void *user_data, const char *metacontext,
		      uint64_t offset, uint32_t *entries, size_t n,
		      int *error)
{
	struct own_walk *w = user_data;
	int depth = !strcmp(metacontext, NBD_CONTEXT_DEPTH);
	uint64_t at = offset;
	size_t i;

	(void)error;
	/* the depth where the server has it: base:allocation calls a
	   backing file's clusters data too */
	if (depth != w->depth ||
	    (!depth && strcmp(metacontext, LIBNBD_CONTEXT_BASE_ALLOCATION)))
		return 0;
	for (i = 0; i + 1 < n; i += 2) {
		int own = depth ? entries[i + 1] == 1 :
				  !(entries[i + 1] & LIBNBD_STATE_HOLE);

		if (!own && !w->found) {
			w->found = 1;
			w->foreign = at;
		}
		at += entries[i];
	}
	if (at > w->covered)
		w->covered = at;
	return 0;
}

/*
 * Does the qcow2 allocate every cluster of [@start, @end)?  0 and
 * *@foreign = UINT64_MAX when it does, else 0 and the first byte it does
 * not; or libnbd's errno.
 */
static errcode_t allocated(struct nbd_conn *c, uint64_t start, uint64_t end,
			   uint64_t *foreign)
{
	struct own_walk w = { .depth = c->srv.has_depth };
	nbd_extent_callback cb = { .callback = own_extent, .user_data = &w };
	uint64_t pos = start, count;
	int e;

	*foreign = UINT64_MAX;
	while (pos < end) {
		count = end - pos < STATUS_MAX ? end - pos : STATUS_MAX;
		w.covered = pos;
		w.found = 0;
		if (nbd_block_status(c->h, count, pos, cb, 0) == -1) {
			e = nbd_get_errno();
			return e ? (errcode_t)e : EIO;
		}
		if (w.found && w.foreign < end) {
			*foreign = w.foreign > start ? w.foreign : start;
			return 0;
		}
		if (w.covered <= pos)
			return EIO;	/* a reply that says nothing */
		pos = w.covered;
	}
	return 0;
}

/* The data file holds bytes at @at that are not the image's: refused. */
static errcode_t not_own(struct e2trim *t, const char *name, uint64_t at,
			 const char *where)
{
	return lib_fail(t, E2TRIM_ERR_USAGE, "its data file %s holds data at "
			"byte %llu, %s: it is not this image's own data file "
			"(another disk's, perhaps), and trimming through the "
			"image would punch it; point the image at its own data "
			"file", name, (unsigned long long)at, where);
}

errcode_t open_data_file_own(struct e2trim *t)
{
	struct nbd_conn *c = t->nbd;
	uint64_t size, pos = 0, foreign;
	char link[64], name[PATH_MAX];
	ssize_t n;
	off_t ds, de;
	errcode_t rc;

	if (!c || c->data_fd < 0 || (!c->srv.has_status && !c->srv.has_depth))
		return 0;
	/* the file held, by the name the kernel has for it */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", c->data_fd);
	n = readlink(link, name, sizeof(name) - 1);
	snprintf(name + (n > 0 ? n : 0), sizeof(name) - (n > 0 ? (size_t)n : 0),
		 "%s", n > 0 ? "" : "(the qcow2's data file)");
	size = c->srv.size_bytes;
	for (;;) {
		ds = lseek(c->data_fd, (off_t)pos, SEEK_DATA);
		if (ds < 0 && errno == ENXIO)
			return 0;
		if (ds < 0)
			return lib_fail_cause(t, E2TRIM_ERR_OPEN, errno, "its "
					      "data file %s", name);
		de = lseek(c->data_fd, ds, SEEK_HOLE);
		if (de < 0)
			return lib_fail_cause(t, E2TRIM_ERR_OPEN, errno, "its "
					      "data file %s", name);
		if ((uint64_t)ds >= size)
			return not_own(t, name, (uint64_t)ds, "past the "
				       "image's virtual size");
		rc = allocated(c, (uint64_t)ds, (uint64_t)de < size ?
			       (uint64_t)de : size, &foreign);
		if (rc)
			return lib_fail_cause(t, E2TRIM_ERR_OPEN, rc, "the "
					      "allocation of the image's "
					      "clusters");
		if (foreign != UINT64_MAX)
			return not_own(t, name, foreign, "where the image "
				       "allocates no cluster");
		if ((uint64_t)de > size)
			return not_own(t, name, size, "past the image's "
				       "virtual size");
		pos = (uint64_t)de;
	}
}
