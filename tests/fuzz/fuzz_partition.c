// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_partition.c - libFuzzer target: partition tables (an MBR with its
 * EBR chains, a GPT with both copies) through the part_reader, as e2trim
 * reads a VM image's table through NBD
 *
 * The input is a sparse disk: a little-endian u32 of its size in
 * sectors (at most MAX_SECTORS), a byte for the partition -p names,
 * then records of a u32 sector number and that sector's 512 bytes.
 * Every other sector reads as zeroes, so a chain of EBRs far apart or a
 * backup GPT at the last LBA costs only its records.
 *
 * Beyond "no crash, no leak, no undefined behaviour" the target checks
 * what the whole-table rule promises of every table it accepts: no two
 * listed partitions share a byte, none covers sector 0, and the
 * partition -p finds is the one -p all lists under that number.  A
 * broken promise aborts.
 *
 * tests/fuzz/pack_table.py makes an input of a disk image (the seeds).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "e2trim_int.h"
#include "partition.h"
#include "partition_read.h"

#define SECTOR 512
#define MAX_SECTORS (1U << 17)	/* 64 MiB */
#define HEAD 5			/* size, partno */
#define RECORD (4 + SECTOR)

struct sparse_disk {
	const uint8_t *records;
	size_t nrecords;
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Zeroes, then every record that falls into [off, off + len), in order. */
static errcode_t sparse_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	const struct sparse_disk *d = ctx;
	size_t i;

	memset(buf, 0, len);
	for (i = 0; i < d->nrecords; i++) {
		const uint8_t *r = d->records + i * RECORD;
		uint64_t at = (uint64_t)le32(r) * SECTOR, a, b;

		a = at > off ? at : off;
		b = at + SECTOR < off + len ? at + SECTOR : off + len;
		if (a < b)
			memcpy((uint8_t *)buf + (a - off), r + 4 + (a - at),
			       b - a);
	}
	return 0;
}

static int overlap(const struct e2trim_partition *a,
		   const struct e2trim_partition *b)
{
	return a->size_bytes && b->size_bytes &&
	       a->start_bytes < b->start_bytes + b->size_bytes &&
	       b->start_bytes < a->start_bytes + a->size_bytes;
}

static void check_list(const struct e2trim_partition *p, unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		if (p[i].size_bytes && p[i].start_bytes < SECTOR)
			abort();	/* over the MBR */
		for (j = i + 1; j < n; j++)
			if (overlap(&p[i], &p[j]))
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sparse_disk d;
	struct part_reader rd = { .read = sparse_read, .ctx = &d,
				  .sector_size = SECTOR, .blkid_fd = -1 };
	struct e2trim_partition *p = NULL;
	struct e2trim *t;
	uint64_t start = 0, len = 0;
	unsigned int n = 0, i, partno;
	errcode_t list_err, err;

	if (size < HEAD)
		return 0;
	rd.size_bytes = (uint64_t)(le32(data) % MAX_SECTORS + 1) * SECTOR;
	partno = data[4];
	d.records = data + HEAD;
	d.nrecords = (size - HEAD) / RECORD;
	if (e2trim_new(&t))
		return 0;
	list_err = partition_list(t, &rd, &p, &n);
	if (!list_err)
		check_list(p, n);
	err = partition_locate(t, &rd, partno, &start, &len);
	/* -p N finds what -p all lists as N, and only if the table is fine */
	if (!err) {
		if (list_err)
			abort();
		for (i = 0; i < n && p[i].partno != partno; i++)
			;
		if (i == n || p[i].start_bytes != start ||
		    p[i].size_bytes != len)
			abort();
	}
	(void)partition_whole_disk(t, &rd);
	free(p);
	e2trim_free(t);
	return 0;
}
