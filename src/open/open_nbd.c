// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open_nbd.c - open a VM image (qcow2, vmdk, ...) or an NBD URI
 *
 * A raw image stays on the fast path (pread, io_uring, punched holes).
 * Any other format is opened through qemu-nbd, which e2trim starts and
 * stops itself; an NBD URI names a server that runs already.  From then
 * on every read goes through the connection (libext2fs through
 * e2t_nbd_io_manager, the fast readers through libext2fs: t->fd is -1), so
 * nothing ever takes the image file's own bytes for the filesystem's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "e2trim_int.h"
#include "image_format.h"
#include "image_lock.h"
#include "image_qcow2.h"
#include "nbd_io.h"
#include "nbd_server.h"
#include "open_chain.h"
#include "open_data_file.h"
#include "open_nbd.h"
#include "open_rbd.h"
#include "rbd_io.h"

/*
 * qemu-nbd could not take the image's lock: qemu says only that, so name
 * who holds it, as for a raw image (open_hold.c), where it can be seen.
 */
static errcode_t locked(struct e2trim *t, const char *why)
{
	char name[64];
	pid_t pid;

	if (t->image_fd >= 0 && image_lock_other(t->image_fd, &pid)) {
		pid = image_lock_holder(t->image_fd, pid, name, sizeof(name));
		if (pid > 0)
			return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "held by "
					"%s, pid %d (%s)", name, (int)pid, why);
	}
	return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "%s", why);
}

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
		return locked(t, why);
	case NBD_OPEN_TMPDIR:
		lib_fail(t, E2TRIM_ERR_NBD_START, "%s", why);
		lib_fix(t, E2TRIM_ERR_NBD_START, "set TMPDIR to a directory "
			"that exists and may be written (or unset it for "
			"/tmp), then run e2trim again");
		return E2TRIM_ERR_NBD_START;
	default:
		return lib_fail(t, code, "%s", why);
	}
}

static errcode_t check_conn(struct e2trim *t)
{
	struct nbd_conn *c = t->nbd;

	t->size_bytes = c->srv.size_bytes;
	/*
	 * The server e2trim starts is read-only for a dry run (the real
	 * run's can trim: qemu-nbd --discard=unmap) and for a trim until
	 * open_nbd_writable().  A server named by an NBD URI is the same
	 * for both: a dry run asks what the real run asks (issue 34).
	 */
	if (!c->srv.can_trim && !t->nbd_reopen &&
	    (!t->opt.dryrun || e2t_nbd_is_uri(t->path)))
		return lib_fail(t, E2TRIM_ERR_NBD_NO_TRIM, NULL);
	return 0;
}

errcode_t open_nbd_uri(struct e2trim *t)
{
	char why[512] = "";
	enum nbd_open_fail rc;

	rc = e2t_nbd_conn_open_uri(&t->nbd, t->path, why, sizeof(why));
	if (rc)
		return conn_fail(t, rc, E2TRIM_ERR_NBD_CONNECT, why);
	snprintf(t->res.image_format, sizeof(t->res.image_format), "nbd");
	return check_conn(t);
}

/*
 * What the qcow2 header says before qemu-nbd opens the image: encrypted
 * (refused), a version 2 overlay (qemu drops every discard there), an
 * external data file (whose blocks are the ones freed).  A LUKS header
 * at byte 0, in any format, is encrypted too.
 */
static errcode_t image_facts(struct e2trim *t, const char *fmt,
			     struct qcow2_facts *q)
{
	int is_qcow2 = fmt && !strcmp(fmt, "qcow2") &&
		       !qcow2_facts_read(t->fd, q);

	if (!is_qcow2)
		memset(q, 0, sizeof(*q));
	if (!t->is_blkdev && (luks_header(t->fd) || q->encrypted))
		return lib_fail(t, E2TRIM_ERR_IMAGE_ENCRYPTED, NULL);
	return 0;
}

/* The data file's blocks count with the image's (see open_nbd.h). */
static void hold_data_file(struct e2trim *t, const struct qcow2_facts *q)
{
	struct stat st;

	t->nbd->data_fd = qcow2_open_data_file(t->path, q->data_file);
	if (t->nbd->data_fd >= 0 && !fstat(t->nbd->data_fd, &st))
		t->res.allocated_before_bytes += (uint64_t)st.st_blocks * 512;
	t->res.allocated_after_bytes = t->res.allocated_before_bytes;
}

int open_nbd_frees_nothing(const struct e2trim *t)
{
	return t->nbd && t->nbd->drops_discard;
}

uint64_t open_nbd_allocated(const struct e2trim *t)
{
	struct stat st;
	uint64_t n = 0;

	if (t->image_fd >= 0 && !fstat(t->image_fd, &st))
		n += (uint64_t)st.st_blocks * 512;
	if (t->nbd && t->nbd->data_fd >= 0 && !fstat(t->nbd->data_fd, &st))
		n += (uint64_t)st.st_blocks * 512;
	return n;
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

/*
 * --format FMT given: what the first bytes say must not contradict it,
 * so that the message names the mismatch rather than qemu's failure.
 */
static errcode_t check_format_given(struct e2trim *t, const char *fmt)
{
	const char *magic = image_format_probe(t->fd);

	if (magic && strcmp(magic, fmt))
		return lib_fail(t, E2TRIM_ERR_USAGE, "--format %s, but its "
				"first bytes say %s; give --format %s, or leave "
				"--format out", fmt, magic, magic);
	if (!magic && image_format_has_magic(fmt))
		return lib_fail(t, E2TRIM_ERR_USAGE, "--format %s, but it has "
				"no %s header (its first bytes name no VM "
				"format); a raw image needs no --format", fmt,
				fmt);
	return 0;
}

/* The formats whose header open_chain.c reads for the files it names. */
static int names_files(const char *fmt)
{
	return !strcmp(fmt, "qcow2") || !strcmp(fmt, "qcow");
}

/*
 * The other formats are not followed into the files they name (a vmdk's
 * extents, a qed's or vmdk's backing file, ...): such an image is
 * refused before qemu opens any of them, and again before the writable
 * server (its header may have been rewritten since).
 */
static errcode_t check_names_nothing(struct e2trim *t, int fd)
{
	const char *fmt = t->res.image_format, *what;
	char name[512];

	if (names_files(fmt) ||
	    !image_names_files(fd, t->path, fmt, &what, name, sizeof(name)))
		return 0;
	return lib_fail(t, E2TRIM_ERR_USAGE, "this %s image names %s, "
			"\"%s\": e2trim follows only a qcow2 into the files "
			"it names (its data file and backing chain, gated as "
			"targets); make it one file with qemu-img convert -O "
			"qcow2 (or -O raw) and trim that", fmt, what, name);
}

/*
 * Before the writable server: the names the header holds now pass the
 * gates again, and the data file is still the one held since open.
 */
static errcode_t recheck_chain(struct e2trim *t)
{
	errcode_t err;

	if (t->rbd || t->image_fd < 0)
		return 0;
	if (!names_files(t->res.image_format))
		return check_names_nothing(t, t->image_fd);
	err = open_chain_check(t, t->image_fd, 1);
	if (err)
		return err;
	if (!open_chain_same_data_file(t, t->image_fd, t->nbd->data_fd))
		return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "its data file "
				"was replaced while e2trim ran; nothing was "
				"discarded");
	return 0;
}

/* qemu-nbd is on $PATH: else the fix is to install it. */
static int have_qemu_nbd(void)
{
	const char *path = getenv("PATH");
	char file[4096];
	const char *p, *end;

	for (p = path; p && *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		snprintf(file, sizeof(file), "%.*s/qemu-nbd", (int)(end - p),
			 p);
		if (!access(file, X_OK))
			return 1;
	}
	return 0;
}

/*
 * qemu-nbd opened the image by its name (from its folder: relative
 * backing and data file names resolve as qemu resolves them), so the
 * name is not resolved once here: the server must hold the very file
 * e2trim opened (its descriptor, @t->image_fd), else the name was
 * re-pointed between the two opens and the plan would be made from, or
 * carried out on, another image (26, issue 41.3).  Where the server
 * cannot be found (no /proc) nothing is said.
 */
static errcode_t server_is_ours(struct e2trim *t)
{
	struct stat st;
	int held = 0;

	if (t->image_fd < 0 || fstat(t->image_fd, &st) ||
	    e2t_nbd_server_holds(t->nbd, st.st_dev, st.st_ino, &held) || held)
		return 0;
	return lib_fail(t, E2TRIM_ERR_RENAMED, "qemu-nbd, started on the "
			"name, has another file open than the one e2trim "
			"opened: the name was re-pointed in between");
}

/* qemu-nbd did not start: a format qemu does not know, or no qemu-nbd. */
static errcode_t start_failed(struct e2trim *t, const char *fmt,
			      const char *why)
{
	if (!have_qemu_nbd())
		return lib_fail(t, E2TRIM_ERR_NBD_START, "qemu-nbd is not "
				"installed: install qemu-utils");
	/* qemu's words for a format name it has no driver for */
	if (t->opt.format && strstr(why, "Unknown driver"))
		return lib_fail(t, E2TRIM_ERR_USAGE, "unknown format %s: qemu "
				"has no such driver (qemu-img --help lists "
				"them)", fmt);
	return lib_fail(t, E2TRIM_ERR_NBD_START, "%s", why);
}

errcode_t open_image_format(struct e2trim *t)
{
	const char *fmt = t->opt.format;
	struct qcow2_facts q;
	char why[512] = "";
	enum nbd_open_fail rc;
	errcode_t err;

	if (!fmt && !t->is_blkdev) {
		err = choose_format(t, &fmt);
		if (err)
			return err;
	}
	err = image_facts(t, fmt, &q);
	if (err)
		return err;
	if (!fmt || !strcmp(fmt, "raw"))
		return 0;
	if (t->is_blkdev)
		return lib_fail(t, E2TRIM_ERR_USAGE,
				"--format works on image files only");
	if (t->opt.format) {
		err = check_format_given(t, fmt);
		if (err)
			return err;
	}
	snprintf(t->res.image_format, sizeof(t->res.image_format), "%s", fmt);
	/* where the header points (data file, backing chain), gated */
	if (names_files(fmt))
		err = open_chain_check(t, t->fd, 0);
	else
		err = check_names_nothing(t, t->fd);
	if (err)
		return err;
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
	rc = e2t_nbd_conn_open_image(&t->nbd, t->path, fmt, 1, why, sizeof(why));
	/* only the first bytes said it is a VM image: they may be a raw's */
	if (rc == NBD_OPEN_FAILED && !t->opt.format && have_qemu_nbd())
		return lib_fail(t, E2TRIM_ERR_NBD_START, "%s; if it is a raw "
				"image whose first bytes only look like a %s "
				"header, give --format raw", why, fmt);
	if (rc == NBD_OPEN_FAILED)
		return start_failed(t, fmt, why);
	if (rc)
		return conn_fail(t, rc, E2TRIM_ERR_NBD_START, why);
	err = server_is_ours(t);
	if (err)
		return err;
	/*
	 * measured with qemu 7.2: only qcow2 (and raw) free trimmed space;
	 * said once qemu has opened it, so never for a format it does not know
	 */
	if (strcmp(fmt, "qcow2"))
		lib_warn(t, "qemu's %s driver keeps the space of what is trimmed:"
			 " the image will not shrink; convert it once with "
			 "qemu-img convert -O qcow2", fmt);
	t->nbd_reopen = !t->opt.dryrun;
	t->nbd->drops_discard = q.version == 2 && q.backing;
	hold_data_file(t, &q);
	if (t->nbd->drops_discard && t->opt.mode != E2TRIM_ZERO_FILL)
		lib_warn(t, "nothing can be freed in this image: qemu drops "
			 "every discard on a compat=0.10 qcow2 over a backing "
			 "file; upgrade it with qemu-img amend -f qcow2 -o "
			 "compat=1.1 and run e2trim again");
	err = check_conn(t);
	/* another disk named as the data file: its data would be punched */
	return err ? err : open_data_file_own(t);
}

/* The superblock's 1 KiB as the connection reads it now. */
static errcode_t read_super(struct e2trim *t, unsigned char *buf)
{
	return e2t_nbd_conn_pread(t->nbd, buf, 1024, t->offset_bytes + 1024);
}

errcode_t open_nbd_writable(struct e2trim *t)
{
	unsigned char before[1024], after[1024];
	char why[512] = "";
	enum nbd_open_fail rc;
	int err;

	/* an RBD image is locked now (open_rbd.c), then checked again */
	if (t->rbd_io)
		return open_rbd_writable(t);
	if (!t->nbd || !t->nbd_reopen)
		return 0;
	err = read_super(t, before);
	if (err)
		return lib_fail_cause(t, E2TRIM_ERR_NBD_START, err,
				      "while reading the superblock again");
	t->nbd_reopen = 0;
	err = recheck_chain(t);
	if (err)
		return err;
	rc = e2t_nbd_conn_reopen_image(t->nbd, t->path, t->res.image_format, 0,
				   why, sizeof(why));
	if (rc)
		return conn_fail(t, rc, E2TRIM_ERR_NBD_START, why);
	err = server_is_ours(t);
	if (err)
		return err;
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
	if (!t->nbd->srv.can_trim)
		return lib_fail(t, E2TRIM_ERR_NBD_NO_TRIM, NULL);
	return 0;
}

/*
 * What libblkid reads of a rarer table (sun, bsd, ...; MBR and GPT are
 * read through the connection itself): the first and the last MiBs.
 * Anything else reads as zeroes.
 */
#define SHADOW_EDGE (2ULL << 20)

/* @len bytes at @off of the range that starts at byte @start of the disk */
static errcode_t copy_range(struct e2trim *t, int fd, uint64_t start,
			    uint64_t size, uint64_t off, uint64_t len)
{
	unsigned char buf[64 << 10];
	uint64_t n;
	errcode_t rc;

	if (off >= size)
		return 0;
	if (len > size - off)
		len = size - off;
	while (len) {
		n = len < sizeof(buf) ? len : sizeof(buf);
		rc = t->rbd_io ? e2t_rbd_io_pread(t->rbd_io, buf, n, start + off) :
				 e2t_nbd_conn_pread(t->nbd, buf, n, start + off);
		if (rc)
			return rc;
		if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n)
			return errno ? errno : EIO;
		off += n;
		len -= n;
	}
	return 0;
}

errcode_t open_nbd_shadow_range(struct e2trim *t, uint64_t start,
				uint64_t size, int *out)
{
	uint64_t tail;
	errcode_t rc;
	int fd;

	fd = memfd_create("e2trim-table", MFD_CLOEXEC);
	if (fd < 0)
		return errno;
	tail = size > SHADOW_EDGE ? size - SHADOW_EDGE : 0;
	rc = ftruncate(fd, (off_t)size) ? errno : 0;
	if (!rc)
		rc = copy_range(t, fd, start, size, 0, SHADOW_EDGE);
	if (!rc)
		rc = copy_range(t, fd, start, size, tail, SHADOW_EDGE);
	if (rc) {
		close(fd);
		return rc;
	}
	*out = fd;
	return 0;
}

errcode_t open_nbd_shadow(struct e2trim *t, int *out)
{
	return open_nbd_shadow_range(t, 0, t->size_bytes, out);
}

void open_nbd_close(struct e2trim *t)
{
	e2t_nbd_conn_close(t->nbd);
	t->nbd = NULL;
	if (t->image_fd >= 0)
		close(t->image_fd);
	t->image_fd = -1;
	open_rbd_close(t);
}
