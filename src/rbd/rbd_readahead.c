// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbd_readahead.c - reads asked ahead through librbd, many in flight
 *
 * libext2fs reads through e2t_rbd_io_manager one request at a time, and
 * each synchronous rbd_read is a round trip to an OSD (a few hundred
 * microseconds on a local cluster, more on a network).  The checks and
 * the verification read little (1.4 MB of an aged 1 GiB ext4) but in
 * ~180 requests: the resize inode's 127 reserved GDT blocks one by one,
 * directory and extent blocks here and there.  As nbd_readahead.c does
 * for NBD:
 *  - what the fast readers say comes next (io_channel_cache_readahead())
 *    is read with rbd_aio_read into a buffer of its own, up to RA_CHUNK
 *    bytes a buffer;
 *  - a read that starts where the previous one ended asks the next
 *    RA_WINDOW bytes ahead, in RA_SEQ_CHUNK chunks aligned to their size
 *    (so that a chunk asked already is found again and not asked twice);
 *  - a later read that lies inside one buffer is served from it, waiting
 *    for it if it is still in flight; a buffer read to its end, or whose
 *    slot a new readahead needs, is dropped.
 * A read that finds nothing, or a readahead that failed, goes to librbd
 * directly as before: readahead makes reads faster, never different.
 * Nothing read ahead outlives the handle it was read through:
 * e2t_rbd_ra_drop_all() runs before the image is reopened to be locked, so
 * the checks under the lock read the image afresh.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rbd_dl.h"
#include "rbd_readahead.h"

#define RA_SLOTS 16
#define RA_CHUNK (1U << 20)
#define RA_SEQ_CHUNK (64U << 10)
#define RA_WINDOW (256U << 10)

enum ra_state { RA_FREE, RA_FLIGHT, RA_DONE, RA_FAILED };

struct ra_slot {
	enum ra_state state;
	uint64_t off, len;	/* image bytes */
	void *comp;		/* librbd's completion, while in flight */
	unsigned char *buf;
};

struct rbd_ra {
	struct rbd_dl *d;
	uint64_t size;
	struct ra_slot slot[RA_SLOTS];
	unsigned int next;	/* the slot the next readahead takes */
};

struct rbd_ra *e2t_rbd_ra_new(struct rbd_dl *d, uint64_t size)
{
	struct rbd_ra *ra = calloc(1, sizeof(*ra));

	if (ra) {
		ra->d = d;
		ra->size = size;
	}
	return ra;
}

/* Until @s is no longer in flight: librbd has written its buffer. */
static void wait_slot(struct ra_slot *s)
{
	if (s->state != RA_FLIGHT)
		return;
	s->state = e2t_rbd_dl_io_wait(s->comp) ? RA_FAILED : RA_DONE;
	s->comp = NULL;
}

static void drop(struct ra_slot *s)
{
	wait_slot(s);
	free(s->buf);
	s->buf = NULL;
	s->state = RA_FREE;
}

/* Is [off, off + len) asked for already? */
static int asked(const struct rbd_ra *ra, uint64_t off, uint64_t len)
{
	const struct ra_slot *s;
	unsigned int i;

	for (i = 0; i < RA_SLOTS; i++) {
		s = &ra->slot[i];
		if ((s->state == RA_FLIGHT || s->state == RA_DONE) &&
		    off >= s->off && off + len <= s->off + s->len)
			return 1;
	}
	return 0;
}

static void start_one(struct rbd_ra *ra, uint64_t off, uint64_t len)
{
	struct ra_slot *s = &ra->slot[ra->next];

	if (asked(ra, off, len))
		return;
	drop(s);
	s->buf = malloc(len);
	if (!s->buf)
		return;
	if (e2t_rbd_dl_io_aio_read(ra->d, s->buf, len, off, &s->comp)) {
		free(s->buf);
		s->buf = NULL;
		return;
	}
	s->off = off;
	s->len = len;
	s->state = RA_FLIGHT;
	ra->next = (ra->next + 1) % RA_SLOTS;
}

/* [off, off + len) inside the image, in pieces of at most @chunk. */
static void start_range(struct rbd_ra *ra, uint64_t off, uint64_t len,
			uint64_t chunk)
{
	uint64_t n;

	if (!ra || off >= ra->size)
		return;
	if (len > ra->size - off)
		len = ra->size - off;
	while (len) {
		n = len < chunk ? len : chunk;
		start_one(ra, off, n);
		off += n;
		len -= n;
	}
}

void e2t_rbd_ra_start(struct rbd_ra *ra, uint64_t off, uint64_t len)
{
	start_range(ra, off, len, RA_CHUNK);
}

void e2t_rbd_ra_sequential(struct rbd_ra *ra, uint64_t off, uint64_t len)
{
	uint64_t from = off - off % RA_SEQ_CHUNK, end = off + len + RA_WINDOW;

	/* whole aligned chunks: one asked already is the same range */
	end -= end % RA_SEQ_CHUNK;
	if (end > from)
		start_range(ra, from, end - from, RA_SEQ_CHUNK);
}

int e2t_rbd_ra_take(struct rbd_ra *ra, void *buf, uint64_t off, uint64_t len)
{
	struct ra_slot *s;
	unsigned int i;

	if (!ra)
		return 0;
	for (i = 0; i < RA_SLOTS; i++) {
		s = &ra->slot[i];
		if (s->state == RA_FREE || s->state == RA_FAILED ||
		    off < s->off || off + len > s->off + s->len)
			continue;
		wait_slot(s);
		if (s->state != RA_DONE)
			return 0;
		memcpy(buf, s->buf + (off - s->off), len);
		/* read to its end: the reader has moved on */
		if (off + len == s->off + s->len)
			drop(s);
		return 1;
	}
	return 0;
}

void e2t_rbd_ra_drop_all(struct rbd_ra *ra)
{
	unsigned int i;

	if (!ra)
		return;
	for (i = 0; i < RA_SLOTS; i++)
		drop(&ra->slot[i]);
	ra->next = 0;
}

void e2t_rbd_ra_free(struct rbd_ra *ra)
{
	e2t_rbd_ra_drop_all(ra);
	free(ra);
}
