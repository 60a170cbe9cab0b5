// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * image_format.c - is this file a VM image (qcow2, vmdk, ...), and how
 *                  large are its clusters
 *
 * The magic numbers at the start of the formats qemu-img knows; anything
 * else is raw and stays on the fast path (pread, punched holes).
 *
 * A magic alone never makes a file a VM image: the first KiB of an ext
 * filesystem is unused and sector 0 of a whole-disk image is the
 * guest's, so a guest can write any magic there.  Taken for a qcow2, its
 * raw disk would be handed to qemu, which frees "clusters" inside the
 * real filesystem's files.  So a file that also reads as a raw ext
 * filesystem or a raw partitioned disk holding one is never opened as a
 * VM image by its magic: it is raw if the VM header is not one qemu
 * would accept, else the reading is ambiguous and --format decides.
 *
 * A VM image frees space only in whole, aligned clusters: a qcow2 says
 * its size in the header (cluster_bits, big-endian at byte 20); for the
 * other formats qemu-img info says it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image_format.h"
#include "run_cmd.h"


struct magic {
	size_t off;
	const char *bytes;
	size_t len;
	const char *format;	/* qemu's name */
};

static const struct magic magics[] = {
	{ 0, "QFI\xfb", 4, "qcow2" },		/* qcow2 (v2, v3); v1 below */
	{ 0, "QED\0", 4, "qed" },
	{ 0, "KDMV", 4, "vmdk" },		/* sparse extent */
	{ 0, "# Disk DescriptorFile", 21, "vmdk" },
	{ 0x40, "\x7f\x10\xda\xbe", 4, "vdi" },	/* 0xbeda107f, little-endian */
	{ 0, "vhdxfile", 8, "vhdx" },
	{ 0, "conectix", 8, "vpc" },		/* dynamic VHD */
	{ 0, "WithoutFreeSpace", 16, "parallels" },
	{ 0, "WithouFreSpacExt", 16, "parallels" },
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const unsigned char *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[1] << 8 | p[0];
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p + 4) << 32 | le32(p);
}

/*
 * An ext superblock at byte @off + 1024 whose geometry is one and fits
 * in @room bytes: magic 0xEF53, a block size of 1 KiB to 64 KiB, groups
 * with blocks and inodes, a first data block of 0 or 1.
 */
static int ext_at(int fd, uint64_t off, uint64_t room)
{
	unsigned char sb[1024];
	uint64_t blocks;
	uint32_t log;

	if (room < 2048 ||
	    pread(fd, sb, sizeof(sb), (off_t)(off + 1024)) != sizeof(sb))
		return 0;
	if (sb[56] != 0x53 || sb[57] != 0xef)
		return 0;
	log = le32(sb + 24);
	if (log > 6 || !le32(sb + 32) || !le32(sb + 40) || le32(sb + 20) > 1)
		return 0;
	blocks = le32(sb + 4);
	if (le32(sb + 96) & 0x80)		/* INCOMPAT_64BIT */
		blocks |= (uint64_t)le32(sb + 0x150) << 32;
	return blocks && blocks <= (room >> (10 + log));
}

/*
 * A GPT header at LBA @lba of @ss-byte sectors whose entries name a
 * partition holding an ext filesystem.  Lax on purpose (no checksums):
 * anything that may be a raw disk keeps the file from qemu.
 */
static int gpt_ext_at(int fd, unsigned int ss, uint64_t lba, uint64_t size)
{
	unsigned char h[92], e[128];
	uint64_t entries, first, last;
	uint32_t n, esz, i;

	if (pread(fd, h, sizeof(h), (off_t)(lba * ss)) != sizeof(h) ||
	    memcmp(h, "EFI PART", 8))
		return 0;
	entries = le64(h + 72);
	n = le32(h + 80);
	esz = le32(h + 84);
	if (esz < sizeof(e) || esz > 4096 || n > 1024)
		return 0;
	for (i = 0; i < n; i++) {
		if (pread(fd, e, sizeof(e), (off_t)(entries * ss + (uint64_t)i * esz)) !=
		    sizeof(e))
			return 0;
		first = le64(e + 32);
		last = le64(e + 40);
		if (!memcmp(e, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16) ||
		    last < first || first > size / ss)
			continue;
		if (ext_at(fd, first * ss, (last - first + 1) * ss))
			return 1;
	}
	return 0;
}

/* The four primary entries of an MBR whose partitions hold ext. */
static int mbr_ext(int fd, uint64_t size)
{
	unsigned char m[512];
	const unsigned char *e;
	uint64_t start, len;
	int i;

	if (pread(fd, m, sizeof(m), 0) != sizeof(m) || m[510] != 0x55 ||
	    m[511] != 0xaa)
		return 0;
	for (i = 0; i < 4; i++) {
		e = m + 446 + 16 * i;
		start = (uint64_t)le32(e + 8) * 512;
		len = (uint64_t)le32(e + 12) * 512;
		if (e[4] && start < size && ext_at(fd, start, len))
			return 1;
	}
	return 0;
}

/*
 * Does the file read as a raw ext filesystem, or a raw disk with one in
 * a partition?  Sector 0 (the MBR) may be what the magic overwrote, so
 * the GPT headers (primary and backup) and the usual first partition
 * starts (1 MiB; sector 63 of old DOS disks) are looked at too.
 */
static int raw_reading(int fd, uint64_t size)
{
	static const unsigned int ss[] = { 512, 4096 };
	unsigned int i;

	if (ext_at(fd, 0, size) || mbr_ext(fd, size))
		return 1;
	for (i = 0; i < sizeof(ss) / sizeof(ss[0]); i++)
		if (size / ss[i] > 2 &&
		    (gpt_ext_at(fd, ss[i], 1, size) ||
		     gpt_ext_at(fd, ss[i], size / ss[i] - 1, size)))
			return 1;
	return ext_at(fd, 1 << 20, size > (1 << 20) ? size - (1 << 20) : 0) ||
	       ext_at(fd, 63 * 512, size > 63 * 512 ? size - 63 * 512 : 0);
}

/*
 * Would qemu open the qcow2 header (qcow2_do_open()'s checks): version 2
 * or 3, 512 B to 2 MiB clusters, L1 and refcount tables on cluster
 * boundaries inside the file, a v3 header no longer than a cluster.
 * Other formats: their magic is all that is looked at.
 */
static int header_plausible(int fd, uint64_t size, const char *format)
{
	unsigned char h[104];
	uint64_t cluster, l1, rt;
	uint32_t version, bits;

	if (strcmp(format, "qcow2"))
		return 1;
	if (pread(fd, h, sizeof(h), 0) != sizeof(h))
		return 0;
	version = be32(h + 4);
	bits = be32(h + 20);
	if ((version != 2 && version != 3) || bits < 9 || bits > 21)
		return 0;
	cluster = (uint64_t)1 << bits;
	l1 = be64(h + 40);
	rt = be64(h + 48);
	if (!l1 || l1 % cluster || l1 >= size || !rt || rt % cluster ||
	    rt >= size || !be64(h + 24))
		return 0;
	return version == 2 || (be32(h + 100) >= 104 && be32(h + 100) <= cluster);
}

enum image_choice image_format_choose(int fd, uint64_t size,
				      const char **format)
{
	*format = image_format_probe(fd);
	if (!*format || !raw_reading(fd, size))
		return *format ? IMAGE_VM : IMAGE_RAW;
	if (!header_plausible(fd, size, *format))
		return IMAGE_RAW_MAGIC;
	return IMAGE_AMBIGUOUS;
}

int image_format_has_magic(const char *format)
{
	size_t i;

	if (!strcmp(format, "qcow"))
		return 1;
	for (i = 0; i < sizeof(magics) / sizeof(magics[0]); i++)
		if (!strcmp(magics[i].format, format))
			return 1;
	return 0;
}

const char *image_format_probe(int fd)
{
	unsigned char hdr[128];
	ssize_t n = pread(fd, hdr, sizeof(hdr), 0);
	size_t i;

	if (n < 0)
		return NULL;
	for (i = 0; i < sizeof(magics) / sizeof(magics[0]); i++) {
		const struct magic *m = &magics[i];

		if ((size_t)n < m->off + m->len ||
		    memcmp(hdr + m->off, m->bytes, m->len))
			continue;
		/* the qcow2 magic with version 1 is the older qcow */
		if (i == 0 && n >= 8 && be32(hdr + 4) == 1)
			return "qcow";
		return m->format;
	}
	return NULL;
}

/*
 * `qemu-img info -U --output=json -f @format @path` into @buf: 0, or why
 * not (EIO: it ran and failed).
 */
static errcode_t qemu_img_info(const char *path, const char *format,
			       char *buf, size_t len)
{
	char *argv[] = { (char *)"qemu-img", (char *)"info", (char *)"-U",
			 (char *)"--output=json", (char *)"-f", (char *)format,
			 (char *)"--", (char *)path, NULL };
	int status;
	errcode_t err = run_cmd_capture(argv, buf, len, -1, &status);

	return err ? err : status ? EIO : 0;
}

/* "cluster-size": N from qemu-img info. */
static uint64_t cluster_from_qemu_img(const char *path, const char *format)
{
	char buf[8192], *p;

	if (qemu_img_info(path, format, buf, sizeof(buf)))
		return 0;
	p = strstr(buf, "\"cluster-size\":");
	return p ? strtoull(p + strlen("\"cluster-size\":"), NULL, 10) : 0;
}

/*
 * The JSON string value after the key @key (with its quotes and colon) at
 * or after @from, up to @end, as qemu-img escaped it, into @out (""
 * when absent); the value's end, or NULL.
 */
static const char *json_str(const char *from, const char *end,
			    const char *key, char *out, size_t len)
{
	const char *p = strstr(from, key), *q;
	size_t n;

	out[0] = '\0';
	if (!p || (end && p >= end))
		return NULL;
	p = strchr(p + strlen(key), '"');
	if (!p)
		return NULL;
	for (q = ++p; *q && *q != '"'; q++)
		if (*q == '\\' && q[1])
			q++;
	n = (size_t)(q - p) < len - 1 ? (size_t)(q - p) : len - 1;
	memcpy(out, p, n);
	out[n] = '\0';
	return q;
}

/*
 * A vmdk descriptor file (text) holds no data: its extent lines ("RW
 * 131072 FLAT "disk-flat.vmdk" 0") name the files that do.  The first
 * name into @name; 1 for a descriptor, 0 for anything else.
 */
static int vmdk_descriptor(int fd, char *name, size_t len)
{
	static const char *const access[] = { "RW ", "RDONLY ", "NOACCESS " };
	char buf[4096], *line, *save = NULL, *q;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	size_t i;

	if (n < 21 || memcmp(buf, "# Disk DescriptorFile", 21))
		return 0;
	buf[n] = '\0';
	snprintf(name, len, "(its extents)");
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		for (i = 0; i < sizeof(access) / sizeof(access[0]); i++)
			if (!strncmp(line, access[i], strlen(access[i])) &&
			    (q = strchr(line, '"'))) {
				snprintf(name, len, "%.*s",
					 (int)strcspn(q + 1, "\""), q + 1);
				return 1;
			}
	return 1;
}

/* A qed with the backing-file feature (bit 0 of its features, at 16). */
static int qed_backing(int fd)
{
	unsigned char h[24];

	return pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	       !memcmp(h, "QED\0", 4) && (le64(h + 16) & 1);
}

int image_names_files(int fd, const char *path, const char *format,
		      const char **what, char *name, size_t len)
{
	char buf[16384], self[4096], ext[4096];
	const char *p, *end;

	*what = "an extent file";
	if (!strcmp(format, "vmdk") && vmdk_descriptor(fd, name, len))
		return 1;
	*what = "a backing file";
	if (qemu_img_info(path, format, buf, sizeof(buf))) {
		/* qemu-nbd may not open it either: a qed says it itself */
		snprintf(name, len, "(named in its header)");
		return !strcmp(format, "qed") && qed_backing(fd);
	}
	if (json_str(buf, NULL, "\"backing-filename\":", name, len))
		return 1;
	*what = "a data file";
	if (json_str(buf, NULL, "\"data-file\":", name, len))
		return 1;
	/* every extent is the image itself (a sparse vmdk's one) */
	*what = "an extent file";
	json_str(buf, NULL, "\"filename\":", self, sizeof(self));
	p = strstr(buf, "\"extents\":");
	end = p ? strchr(p, ']') : NULL;
	while (p && (p = json_str(p, end, "\"filename\":", ext, sizeof(ext))))
		if (strcmp(ext, self)) {
			snprintf(name, len, "%s", ext);
			return 1;
		}
	return 0;
}

uint64_t image_cluster_bytes(int fd, const char *path, const char *format)
{
	unsigned char hdr[24];
	uint32_t bits;

	if (!strcmp(format, "qcow2")) {
		if (pread(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
			return 0;
		bits = be32(hdr + 20);
		/* qemu accepts 512 B to 2 MiB clusters */
		return bits >= 9 && bits <= 21 ? (uint64_t)1 << bits : 0;
	}
	return cluster_from_qemu_img(path, format);
}
