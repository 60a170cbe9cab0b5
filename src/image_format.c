// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * image_format.c - is this file a VM image (qcow2, vmdk, ...), and how
 *                  large are its clusters
 *
 * The magic numbers at the start of the formats qemu-img knows; anything
 * else is raw and stays on the fast path (pread, punched holes).  A raw
 * image whose first bytes happen to spell a magic can be forced with
 * --format raw.
 *
 * A VM image frees space only in whole, aligned clusters: a qcow2 says
 * its size in the header (cluster_bits, big-endian at byte 20); for the
 * other formats qemu-img info says it.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "image_format.h"

extern char **environ;

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

/* "cluster-size": N from `qemu-img info -U --output=json @path`. */
static uint64_t cluster_from_qemu_img(const char *path, const char *format)
{
	char *argv[] = { (char *)"qemu-img", (char *)"info", (char *)"-U",
			 (char *)"--output=json", (char *)"-f", (char *)format,
			 (char *)"--", (char *)path, NULL };
	posix_spawn_file_actions_t fa;
	char buf[8192], *p;
	size_t have = 0;
	uint64_t v = 0;
	int pfd[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return 0;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, "qemu-img", &fa, NULL, argv, environ))
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	while (pid > 0 && have < sizeof(buf) - 1 &&
	       (n = read(pfd[0], buf + have, sizeof(buf) - 1 - have)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		have += n;
	}
	close(pfd[0]);
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	buf[have] = '\0';
	p = strstr(buf, "\"cluster-size\":");
	if (p)
		v = strtoull(p + strlen("\"cluster-size\":"), NULL, 10);
	return v;
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
