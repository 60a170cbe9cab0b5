// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * partition_gpt.c - which copy of a GPT can be believed
 *
 * A GPT is kept twice: the primary header at LBA 1, the backup at the
 * disk's last LBA, each with its own copy of the entry array.  When the
 * primary is damaged, libblkid silently reads the backup.  e2trim looks
 * at both itself (UEFI spec 2.x, "GUID Partition Table (GPT) Disk
 * Layout") so that it can say which one it went by.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ext2fs/ext2fs.h>
#include <e2trim_err.h>

#include "partition_int.h"

/* Offsets in the header; every field is little-endian. */
#define GPT_SIG		0	/* "EFI PART" */
#define GPT_HDR_SIZE	12	/* u32, at least 92 */
#define GPT_HDR_CRC	16	/* u32, CRC32 of hdr_size bytes, itself 0 */
#define GPT_MY_LBA	24	/* u64 */
#define GPT_ALT_LBA	32	/* u64 */
#define GPT_FIRST_USE	40	/* u64 */
#define GPT_LAST_USE	48	/* u64 */
#define GPT_ENT_LBA	72	/* u64 */
#define GPT_ENT_NUM	80	/* u32 */
#define GPT_ENT_SIZE	84	/* u32, 128 * 2^n */
#define GPT_ENT_CRC	88	/* u32, CRC32 of the whole entry array */
#define GPT_HDR_MIN	92
/* Offsets in an entry */
#define GPT_E_TYPE	0	/* partition type GUID; zeroes: unused */
#define GPT_E_FIRST	32	/* u64, first LBA */
#define GPT_E_LAST	40	/* u64, last LBA, inclusive */
/* libblkid reads no more than this many entries either */
#define GPT_ENT_MAX	(1U << 16)
/* 65536 entries of 256 bytes: more is a lying header, not a table */
#define GPT_ARRAY_MAX	(16U << 20)

/* The CRC-32 of IEEE 802.3 (zlib's crc32()), which the GPT uses. */
static uint32_t crc32_ieee(const unsigned char *p, size_t n)
{
	uint32_t crc = 0xFFFFFFFFU;
	int k;

	while (n--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320U & -(crc & 1));
	}
	return ~crc;
}

static uint32_t le32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return ext2fs_le32_to_cpu(v);
}

static uint64_t le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return ext2fs_le64_to_cpu(v);
}

/* Keep the used entries of a whole array: type GUID not all zeroes. */
static errcode_t keep_entries(const unsigned char *arr, uint32_t num,
			      uint32_t size, struct gpt_state *st)
{
	static const unsigned char unused[16];
	uint32_t i;

	free(st->entries);
	st->nentries = 0;
	st->entries = calloc(num ? num : 1, sizeof(*st->entries));
	if (!st->entries)
		return ENOMEM;
	for (i = 0; i < num; i++) {
		const unsigned char *e = arr + (size_t)i * size;
		struct gpt_entry *g = &st->entries[st->nentries];

		if (!memcmp(e + GPT_E_TYPE, unused, sizeof(unused)))
			continue;
		g->partno = i + 1;
		g->first_lba = le64(e + GPT_E_FIRST);
		g->last_lba = le64(e + GPT_E_LAST);
		st->nentries++;
	}
	return 0;
}

/* The entry array's CRC, as the header at @h says it must be. */
static const char *check_entries(const struct part_reader *rd,
				 const unsigned char *h, struct gpt_state *st)
{
	unsigned int ss = rd->sector_size;
	uint32_t num = le32(h + GPT_ENT_NUM), size = le32(h + GPT_ENT_SIZE);
	unsigned char *arr;
	const char *why = NULL;

	/* no bigger than the disk: nothing to allocate on a lying size */
	if (num > GPT_ENT_MAX || size < 128 || size % 8 ||
	    (uint64_t)num * size > GPT_ARRAY_MAX ||
	    (uint64_t)num * size > rd->size_bytes)
		return "its entry array has an impossible size";
	arr = malloc((size_t)num * size + 1);
	if (!arr)
		return "no memory for its entry array";
	if (part_read(rd, arr, (size_t)num * size, le64(h + GPT_ENT_LBA) * ss))
		why = "its entry array cannot be read";
	else if (crc32_ieee(arr, (size_t)num * size) != le32(h + GPT_ENT_CRC))
		why = "its entry array's CRC does not match";
	else if (keep_entries(arr, num, size, st))
		why = "no memory for its entries";
	free(arr);
	return why;
}

/* NULL when the header at @lba is whole, else what is wrong with it. */
static const char *check_header(const struct part_reader *rd, uint64_t lba,
				struct gpt_state *st)
{
	unsigned int ss = rd->sector_size;
	unsigned char *h = calloc(1, ss);
	uint32_t hsize, crc;
	const char *why = NULL;

	if (!h)
		return "no memory";
	if (part_read(rd, h, ss, lba * ss)) {
		why = "it cannot be read";
		goto done;
	}
	hsize = le32(h + GPT_HDR_SIZE);
	if (memcmp(h + GPT_SIG, "EFI PART", 8)) {
		why = "no \"EFI PART\" signature";
		goto done;
	}
	if (hsize < GPT_HDR_MIN || hsize > ss) {
		why = "its header size is impossible";
		goto done;
	}
	crc = le32(h + GPT_HDR_CRC);
	memset(h + GPT_HDR_CRC, 0, 4);
	if (crc32_ieee(h, hsize) != crc) {
		why = "its header CRC does not match";
		goto done;
	}
	if (le64(h + GPT_MY_LBA) != lba) {
		why = "it says it is at another LBA";
		goto done;
	}
	if (le64(h + GPT_FIRST_USE) > le64(h + GPT_LAST_USE)) {
		why = "its usable area is empty";
		goto done;
	}
	why = check_entries(rd, h, st);
	st->used.lba = lba;
	st->used.alt_lba = le64(h + GPT_ALT_LBA);
	st->used.first_usable = le64(h + GPT_FIRST_USE);
	st->used.last_usable = le64(h + GPT_LAST_USE);
done:
	free(h);
	return why;
}

errcode_t gpt_check(const struct part_reader *rd, struct gpt_state *st)
{
	unsigned int ss = rd->sector_size;
	uint64_t last = rd->size_bytes / ss - 1;

	memset(st, 0, sizeof(*st));
	if (rd->size_bytes / ss < 3)
		return E2TRIM_ERR_PARTITION;
	st->primary_why = check_header(rd, 1, st);
	if (!st->primary_why)
		return 0;
	st->backup_why = check_header(rd, last, st);
	return st->backup_why ? E2TRIM_ERR_PARTITION : 0;
}

void gpt_free(struct gpt_state *st)
{
	free(st->entries);
	st->entries = NULL;
	st->nentries = 0;
}
