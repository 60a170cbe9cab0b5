// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_image_format.c - libFuzzer over the format choice of an image file
 *
 * The input is the file, in a memfd; its size is the input's, or (first
 * byte odd) a sparse 64 MiB with the input at its start, so that the
 * partition entries and superblocks the raw reading looks for can point
 * well past the bytes given.  image_format_choose() must read only inside
 * the file, and never call a file a VM image while a raw reading holds:
 * that is checked against a second, independent look at offset 1024.
 *
 *   make build-fuzz/fuzz_image_format && build-fuzz/fuzz_image_format -max_total_time=60
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "image_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	uint64_t file = size;
	enum image_choice c;
	const char *fmt;

	if (fd < 0)
		fd = memfd_create("fuzz-image", 0);
	if (fd < 0 || ftruncate(fd, 0))
		abort();
	if (size && (data[0] & 1))
		file = 64ULL << 20;
	if (ftruncate(fd, (off_t)file) ||
	    pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	c = image_format_choose(fd, file, &fmt);
	/* a VM reading needs a magic, and raw needs none */
	if ((c == IMAGE_RAW) != (fmt == NULL))
		abort();
	/* an ext superblock at 1024 that fits the file is never IMAGE_VM */
	if (c == IMAGE_VM && size >= 2048 && data[1080] == 0x53 &&
	    data[1081] == 0xef && data[1024 + 24] <= 6 &&
	    !data[1024 + 25] && !data[1024 + 26] && !data[1024 + 27] &&
	    data[1024 + 20] <= 1 && !data[1024 + 21] && !data[1024 + 22] &&
	    !data[1024 + 23] && !(data[1024 + 96] & 0x80) &&
	    (data[1024 + 32] | data[1024 + 33] | data[1024 + 34] | data[1024 + 35]) &&
	    (data[1024 + 40] | data[1024 + 41] | data[1024 + 42] | data[1024 + 43])) {
		uint64_t blocks = (uint64_t)data[1028] | (uint64_t)data[1029] << 8 |
				  (uint64_t)data[1030] << 16 |
				  (uint64_t)data[1031] << 24;

		if (blocks && blocks <= (file >> (10 + data[1024 + 24])))
			abort();
	}
	return 0;
}
