// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sysfs.c - one line of a sysfs attribute, read the one way
 *
 * fgets, never fscanf: glibc's fclose can leak the pushback buffer that
 * scanf's ungetc took (LeakSanitizer saw it).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "sysfs.h"

errcode_t sysfs_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return errno;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	buf[ok ? strcspn(buf, "\n") : 0] = '\0';
	return ok ? 0 : ENODATA;
}

errcode_t sysfs_line(dev_t dev, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%s", major(dev),
		 minor(dev), attr);
	return sysfs_read_line(path, buf, len);
}

uint64_t sysfs_u64(dev_t dev, const char *attr)
{
	char buf[32], *end;
	unsigned long long val;

	if (sysfs_line(dev, attr, buf, sizeof(buf)))
		return 0;
	errno = 0;
	val = strtoull(buf, &end, 10);
	return errno || end == buf ? 0 : val;
}
