/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * size.h - sizes in, sizes out, the way util-linux spells them
 */
#ifndef E2TRIM_SIZE_H
#define E2TRIM_SIZE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parse "4096", "10M", "1.5G", "64KiB", "1MB": K M G T P E are powers of
 * 1024 with or without "iB", "KB" "MB" ... are powers of 1000.  Returns 0,
 * or -EINVAL / -ERANGE.
 */
int parse_size(const char *str, uint64_t *bytes);

/* "229.9 MiB", "4 KiB", "0 B": one decimal, rounded, as util-linux does. */
char *size_to_human(uint64_t bytes, char *buf, size_t len);

#define HUMAN_SIZE_LEN 32

#endif /* E2TRIM_SIZE_H */
