// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open_nbd.c - open a VM image (qcow2, vmdk, ...) or an NBD URI
 *
 * A raw image stays on the fast path (pread, io_uring, punched holes).
 * Any other format is opened through qemu-nbd, which e2trim starts and
 * stops itself; an NBD URI names a server that runs already.  From then
 * on every read goes through the connection (libext2fs through
 * nbd_io_manager, the fast readers through libext2fs: t->fd is -1), so
 * nothing ever takes the image file's own bytes for the filesystem's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <blkid/blkid.h>

#include "e2trim_int.h"
#include "image_format.h"
#include "nbd_io.h"
#include "open_nbd.h"
#include "partition_int.h"

/* The refusals before the first read: server that cannot trim, lock. */
static errcode_t conn_fail(struct e2trim *t, enum nbd_open_fail rc,
			   errcode_t code, const char *why)
{
	switch (rc) {
	case NBD_OPEN_OK:
		return 0;
	case NBD_OPEN_NO_MEMORY:
		return lib_fail(t, E2TRIM_ERR_NO_MEMORY, NULL);
	case NBD_OPEN_NO_LIBNBD:
		return lib_fail(t, E2TRIM_ERR_NO_LIBNBD, "%s", why);
	case NBD_OPEN_LOCKED:
		return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "%s", why);
	default:
		return lib_fail(t, code, "%s", why);
	}
}

static errcode_t check_conn(struct e2trim *t)
{
	struct nbd_conn *c = t->nbd;

	t->size_bytes = c->size_bytes;
	/*
	 * a dry run's own server is read-only: it trims nothing anyway; a
	 * trim's is read-only until open_nbd_writable()
	 */
	if (!t->opt.dryrun && !t->nbd_reopen && !c->can_trim)
		return lib_fail(t, E2TRIM_ERR_NBD_NO_TRIM, NULL);
	return 0;
}

errcode_t open_nbd_uri(struct e2trim *t)
{
	char why[512] = "";
	enum nbd_open_fail rc;

	rc = nbd_conn_open_uri(&t->nbd, t->path, why, sizeof(why));
	if (rc)
		return conn_fail(t, rc, E2TRIM_ERR_NBD_CONNECT, why);
	snprintf(t->res.image_format, sizeof(t->res.image_format), "nbd");
	return check_conn(t);
}

/* No --format: the magic decides only when the file is not raw too. */
static errcode_t choose_format(struct e2trim *t, const char **fmt)
{
	switch (image_format_choose(t->fd, t->size_bytes, fmt)) {
	case IMAGE_AMBIGUOUS:
		return lib_fail(t, E2TRIM_ERR_USAGE, "its first bytes say %s, "
				"but it also reads as a raw disk or ext "
				"filesystem (a guest can write those bytes); "
				"say which with --format raw or --format %s",
				*fmt, *fmt);
	case IMAGE_RAW_MAGIC:
		lib_warn(t, "its first bytes say %s, but no valid %s header "
			 "follows and it reads as a raw disk or ext "
			 "filesystem: trimmed as raw (--format %s to say "
			 "otherwise)", *fmt, *fmt, *fmt);
		*fmt = NULL;
		return 0;
	default:
		return 0;
	}
}

errcode_t open_image_format(struct e2trim *t)
{
	const char *fmt = t->opt.format;
	char why[512] = "";
	enum nbd_open_fail rc;
	errcode_t err;

	if (!fmt && !t->is_blkdev) {
		err = choose_format(t, &fmt);
		if (err)
			return err;
	}
	if (!fmt || !strcmp(fmt, "raw"))
		return 0;
	if (t->is_blkdev)
		return lib_fail(t, E2TRIM_ERR_USAGE,
				"--format works on image files only");
	snprintf(t->res.image_format, sizeof(t->res.image_format), "%s", fmt);
	/* measured with qemu 7.2: only qcow2 (and raw) free trimmed space */
	if (strcmp(fmt, "qcow2"))
		lib_warn(t, "qemu's %s driver keeps the space of what is trimmed:"
			 " the image will not shrink; convert it once with "
			 "qemu-img convert -O qcow2", fmt);
	t->cluster_bytes = image_cluster_bytes(t->fd, t->path, fmt);
	/* from here on the file is qemu-nbd's; ours only tells its size */
	t->image_fd = t->fd;
	t->fd = -1;
	/*
	 * Read-only until every gate and the verification have passed:
	 * qemu opening a qcow2 for writing changes the file by itself (a
	 * persistent dirty bitmap's directory is rewritten, the file grows),
	 * and a refusal must leave the image as it was.
	 */
	rc = nbd_conn_open_image(&t->nbd, t->path, fmt, 1, why, sizeof(why));
	if (rc)
		return conn_fail(t, rc, E2TRIM_ERR_NBD_START, why);
	t->nbd_reopen = !t->opt.dryrun;
	return check_conn(t);
}

/* The superblock's 1 KiB as the connection reads it now. */
static int read_super(struct e2trim *t, unsigned char *buf)
{
	return nbd_conn_pread(t->nbd, buf, 1024, t->offset_bytes + 1024);
}

errcode_t open_nbd_writable(struct e2trim *t)
{
	unsigned char before[1024], after[1024];
	char why[512] = "";
	enum nbd_open_fail rc;
	int err;

	if (!t->nbd || !t->nbd_reopen)
		return 0;
	err = read_super(t, before);
	if (err)
		return lib_fail_cause(t, E2TRIM_ERR_NBD_START, err,
				      "while reading the superblock again");
	t->nbd_reopen = 0;
	rc = nbd_conn_reopen_image(t->nbd, t->path, t->res.image_format, 0,
				   why, sizeof(why));
	if (rc)
		return conn_fail(t, rc, E2TRIM_ERR_NBD_START, why);
	/*
	 * Between the two servers nobody held qemu's lock: a VM that
	 * mounted the filesystem meanwhile left its mark in the superblock.
	 */
	err = read_super(t, after);
	if (err)
		return lib_fail_cause(t, E2TRIM_ERR_NBD_START, err,
				      "while reading the superblock again");
	if (memcmp(before, after, sizeof(before)))
		return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "its superblock "
				"changed while e2trim reopened it for writing");
	/* not check_conn(): t->size_bytes may be a partition's by now */
	if (!t->nbd->can_trim)
		return lib_fail(t, E2TRIM_ERR_NBD_NO_TRIM, NULL);
	return 0;
}

/*
 * What blkid and the GPT checks read: the first and the last MiBs (MBR,
 * GPT headers, the usual entry arrays, filesystem signatures at offset
 * 0), and each GPT header's entry array wherever it points.  Anything
 * else reads as zeroes, which no table's checksum accepts.
 */
#define SHADOW_EDGE (2ULL << 20)
#define SHADOW_MAX_ENTRIES (4ULL << 20)

static int copy_range(struct e2trim *t, int fd, uint64_t off, uint64_t len)
{
	unsigned char buf[64 << 10];
	uint64_t n;
	int rc;

	if (off >= t->size_bytes)
		return 0;
	if (len > t->size_bytes - off)
		len = t->size_bytes - off;
	while (len) {
		n = len < sizeof(buf) ? len : sizeof(buf);
		rc = nbd_conn_pread(t->nbd, buf, n, off);
		if (rc)
			return -rc;
		if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n)
			return -errno;
		off += n;
		len -= n;
	}
	return 0;
}

/* The entry array the GPT header at @lba (sector size @ss) names. */
static int copy_gpt_entries(struct e2trim *t, int fd, unsigned int ss,
			    uint64_t lba)
{
	uint64_t off, len;

	if (gpt_entries_extent(fd, ss, lba, &off, &len))
		return 0;
	if (len > SHADOW_MAX_ENTRIES)
		len = SHADOW_MAX_ENTRIES;
	return copy_range(t, fd, off, len);
}

/*
 * What tells each partition's filesystem (-p all lists them by type):
 * its first and last SHADOW_PART bytes, where the superblocks and
 * signatures libblkid looks for are.  The table is in the shadow by now.
 */
#define SHADOW_PART (256ULL << 10)

static int copy_partition_heads(struct e2trim *t, int fd)
{
	blkid_probe pr = blkid_new_probe();
	blkid_partlist ls;
	blkid_partition p;
	uint64_t start, size, n;
	int i, rc = 0;

	if (!pr)
		return -ENOMEM;
	if (blkid_probe_set_device(pr, fd, 0, 0) ||
	    !(ls = blkid_probe_get_partitions(pr))) {
		blkid_free_probe(pr);
		return 0;	/* no table: nothing more to copy */
	}
	for (i = 0; !rc && i < blkid_partlist_numof_partitions(ls); i++) {
		p = blkid_partlist_get_partition(ls, i);
		if (!p || blkid_partition_get_start(p) < 0 ||
		    blkid_partition_get_size(p) <= 0)
			continue;
		start = (uint64_t)blkid_partition_get_start(p) * 512;
		size = (uint64_t)blkid_partition_get_size(p) * 512;
		n = size < SHADOW_PART ? size : SHADOW_PART;
		rc = copy_range(t, fd, start, n);
		if (!rc)
			rc = copy_range(t, fd, start + size - n, n);
	}
	blkid_free_probe(pr);
	return rc;
}

int open_nbd_shadow(struct e2trim *t)
{
	static const unsigned int sizes[] = { 512, 4096 };
	uint64_t tail;
	unsigned int i;
	int fd, rc;

	fd = memfd_create("e2trim-table", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	tail = t->size_bytes > SHADOW_EDGE ? t->size_bytes - SHADOW_EDGE : 0;
	rc = ftruncate(fd, (off_t)t->size_bytes) ? -errno : 0;
	if (!rc)
		rc = copy_range(t, fd, 0, SHADOW_EDGE);
	if (!rc)
		rc = copy_range(t, fd, tail, SHADOW_EDGE);
	for (i = 0; !rc && i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		rc = copy_gpt_entries(t, fd, sizes[i], 1);
		if (!rc && t->size_bytes >= sizes[i])
			rc = copy_gpt_entries(t, fd, sizes[i],
					      t->size_bytes / sizes[i] - 1);
	}
	if (!rc)
		rc = copy_partition_heads(t, fd);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

void open_nbd_close(struct e2trim *t)
{
	nbd_conn_close(t->nbd);
	t->nbd = NULL;
	if (t->image_fd >= 0)
		close(t->image_fd);
	t->image_fd = -1;
}
