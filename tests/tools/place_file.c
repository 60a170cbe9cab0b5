// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * place_file.c - write files into an ext4 image with their data where the
 * test wants it
 *
 *   place_file IMAGE NAME GOAL DATA [NAME GOAL DATA]...
 *
 * creates /NAME holding the bytes of file DATA, its blocks allocated from
 * block GOAL on (the first free ones at or after it).  debugfs cannot do
 * this: it allocates near the inode's group, and a new inode goes into
 * the first group with a free one, so on a fresh filesystem everything it
 * writes lands at the start.  This is debugfs's own `write`, with a goal.
 * Prints the first and last block of each file's data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <et/com_err.h>
#include <ext2fs/ext2fs.h>

static void check(errcode_t err, const char *what)
{
	if (err) {
		com_err("place_file", err, "%s", what);
		exit(1);
	}
}

/* Read all of @path; returns its size, 0 on error. */
static size_t slurp(const char *path, char **out)
{
	size_t size = 0, cap = 1 << 20;
	char *data = malloc(cap);
	FILE *f = fopen(path, "rb");
	size_t got;

	while (f && data && (got = fread(data + size, 1, cap - size, f)) > 0) {
		size += got;
		if (size == cap)
			data = realloc(data, cap *= 2);
	}
	if (f)
		fclose(f);
	*out = data;
	return data ? size : 0;
}

static void place(ext2_filsys fs, const char *name, blk64_t goal,
		  const char *path)
{
	struct ext2_inode inode;
	ext2_extent_handle_t h;
	ext2_file_t file;
	ext2_ino_t ino;
	blk64_t first, last, n;
	unsigned int written;
	size_t size;
	char *data;

	size = slurp(path, &data);
	if (!size) {
		fprintf(stderr, "place_file: %s: empty or unreadable\n", path);
		exit(1);
	}
	check(ext2fs_new_inode(fs, EXT2_ROOT_INO, LINUX_S_IFREG | 0644, 0,
			       &ino), "while allocating an inode");
	check(ext2fs_link(fs, EXT2_ROOT_INO, name, ino, EXT2_FT_REG_FILE),
	      "while linking");
	ext2fs_inode_alloc_stats2(fs, ino, +1, 0);
	memset(&inode, 0, sizeof(inode));
	inode.i_mode = LINUX_S_IFREG | 0644;
	inode.i_links_count = 1;
	inode.i_atime = inode.i_ctime = inode.i_mtime = fs->now ? fs->now :
							 time(NULL);
	inode.i_flags = EXT4_EXTENTS_FL;
	check(ext2fs_write_new_inode(fs, ino, &inode), "while writing inode");
	/* an empty extent tree in i_block */
	check(ext2fs_extent_open2(fs, ino, &inode, &h),
	      "while starting the extent tree");
	ext2fs_extent_free(h);
	check(ext2fs_read_inode(fs, ino, &inode), "while reading inode");

	n = (size + fs->blocksize - 1) / fs->blocksize;
	check(ext2fs_fallocate(fs, EXT2_FALLOCATE_FORCE_INIT, ino, &inode,
			       goal, 0, n), "while allocating blocks");
	check(ext2fs_file_open2(fs, ino, &inode, EXT2_FILE_WRITE, &file),
	      "while opening the file");
	check(ext2fs_file_write(file, data, size, &written), "while writing");
	check(ext2fs_file_set_size2(file, size), "while setting the size");
	check(ext2fs_file_close(file), "while closing the file");
	if (written != size) {
		fprintf(stderr, "place_file: %s: short write\n", name);
		exit(1);
	}
	check(ext2fs_bmap2(fs, ino, NULL, NULL, 0, 0, NULL, &first), "bmap");
	check(ext2fs_bmap2(fs, ino, NULL, NULL, 0, n - 1, NULL, &last),
	      "bmap");
	printf("%s %llu %llu\n", name, (unsigned long long)first,
	       (unsigned long long)last);
	free(data);
}

int main(int argc, char **argv)
{
	ext2_filsys fs;
	int i;

	if (argc < 5 || (argc - 2) % 3) {
		fprintf(stderr, "usage: place_file IMAGE NAME GOAL DATA "
			"[NAME GOAL DATA]...\n");
		return 2;
	}
	add_error_table(&et_ext2_error_table);
	check(ext2fs_open2(argv[1], NULL, EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0,
			   0, unix_io_manager, &fs), "while opening");
	/* a bitarray of 5 G blocks would be 640 MB */
	fs->default_bitmap_type = EXT2FS_BMAP64_RBTREE;
	check(ext2fs_read_bitmaps(fs), "while reading bitmaps");
	for (i = 2; i + 2 < argc; i += 3)
		place(fs, argv[i], strtoull(argv[i + 1], NULL, 0), argv[i + 2]);
	check(ext2fs_close_free(&fs), "while closing");
	return 0;
}
