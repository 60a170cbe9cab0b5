// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * image_qcow2.c - what a qcow2 header tells e2trim before qemu-nbd runs
 *
 * The header (docs/interop/qcow2.txt in qemu), big-endian: magic, version
 * at 4, backing_file_offset at 8, crypt_method at 32; version 3 adds
 * incompatible_features at 72 and header_length at 100, after which the
 * header extensions follow (type, length, data padded to 8 bytes; type 0
 * ends them).  The external data file's name is extension 0x44415441.
 *  - encrypted (crypt_method): nothing can be read without the key;
 *  - version 2 over a backing file: qemu cannot record a zero cluster,
 *    so it drops every discard (freeing would show the backing file);
 *  - an external data file: the clusters live there, and a trim frees
 *    its space, not the qcow2's.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "image_qcow2.h"

#define QCOW2_VERSION		4
#define QCOW2_BACKING		8
#define QCOW2_BACKING_SIZE	16
#define QCOW2_BACKING_MAX	1023	/* qemu's limit on the name */
#define QCOW2_CRYPT		32
#define QCOW2_V3_HDR_LEN	100
#define QCOW2_V2_HDR_LEN	72
#define QCOW2_EXT_DATA_FILE	0x44415441U
#define QCOW2_EXT_MAX		64	/* more is a damaged header */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const unsigned char *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* The data file's name among the extensions from @off on, into @f. */
static void read_extensions(int fd, uint64_t off, struct qcow2_facts *f)
{
	unsigned char e[8];
	uint32_t type, len;
	int i;

	for (i = 0; i < QCOW2_EXT_MAX; i++) {
		if (pread(fd, e, sizeof(e), (off_t)off) != (ssize_t)sizeof(e))
			return;
		type = be32(e);
		len = be32(e + 4);
		if (!type)
			return;
		if (type == QCOW2_EXT_DATA_FILE && len < sizeof(f->data_file)) {
			if (pread(fd, f->data_file, len, (off_t)off + 8) !=
			    (ssize_t)len)
				len = 0;
			f->data_file[len] = '\0';
			return;
		}
		off += 8 + (((uint64_t)len + 7) & ~7ULL);
	}
}

/* The backing file's name (@len bytes at @off), into @f. */
static void read_backing_name(int fd, uint64_t off, uint32_t len,
			      struct qcow2_facts *f)
{
	if (!off || !len || len > QCOW2_BACKING_MAX ||
	    pread(fd, f->backing_file, len, (off_t)off) != (ssize_t)len)
		len = 0;
	f->backing_file[len] = '\0';
}

errcode_t qcow2_facts_read(int fd, struct qcow2_facts *f)
{
	unsigned char h[104];
	ssize_t n;

	memset(f, 0, sizeof(*f));
	n = pread(fd, h, sizeof(h), 0);
	if (n < 0)
		return errno;
	if (n != (ssize_t)sizeof(h) || memcmp(h, "QFI\xfb", 4))
		return EINVAL;	/* not a qcow2 header */
	f->version = be32(h + QCOW2_VERSION);
	f->backing = be64(h + QCOW2_BACKING) != 0;
	f->encrypted = be32(h + QCOW2_CRYPT) != 0;
	read_backing_name(fd, be64(h + QCOW2_BACKING),
			  be32(h + QCOW2_BACKING_SIZE), f);
	if (f->version >= 3)
		read_extensions(fd, be32(h + QCOW2_V3_HDR_LEN), f);
	else if (f->version == 2)
		read_extensions(fd, QCOW2_V2_HDR_LEN, f);
	return 0;
}

int luks_header(int fd)
{
	unsigned char h[6];

	return pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	       !memcmp(h, "LUKS\xba\xbe", 6);
}

/* conventions: an fd, or -1 for none, as open() */
int qcow2_open_data_file(const char *image_path, const char *name)
{
	char dir[4096], path[8192];

	if (!name[0])
		return -1;
	if (name[0] == '/') {
		snprintf(path, sizeof(path), "%s", name);
	} else {
		snprintf(dir, sizeof(dir), "%s", image_path);
		snprintf(path, sizeof(path), "%s/%s", dirname(dir), name);
	}
	return open(path, O_RDONLY | O_CLOEXEC);
}
