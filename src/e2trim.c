// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * e2trim.c - discard the free space of an unmounted ext2/ext3/ext4
 *            filesystem, on a block device or in an image file
 *
 * The pipeline, one file per stage:
 *   fsck.c             --fsck: e2fsck first, before anything is opened
 *   open.c + gates.c   open the filesystem, refuse anything unsafe
 *   plan.c + bitmap.c  free runs of the block bitmap -> byte extents
 *   target.c           BLKDISCARD on a device, punched holes in a file
 *   report.c           what was done, in fstrim's words
 * main() parses the command line and maps every outcome to an exit code.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <et/com_err.h>
#include <ext2fs/ext2fs.h>

#include "bitmap.h"
#include "e2trim.h"
#include "fsck.h"
#include "open.h"
#include "plan.h"
#include "report.h"
#include "size.h"
#include "target.h"
#include "verify.h"

const char *program_name = "e2trim";

static void __attribute__((__noreturn__)) usage(void)
{
	printf("Usage:\n"
	       " %s [options] <device|image>\n\n"
	       "Discard the free space of an unmounted ext2/ext3/ext4 filesystem.\n\n"
	       "Options:\n"
	       " -o, --offset <num>   the offset in bytes to start discarding from\n"
	       " -l, --length <num>   the number of bytes to discard\n"
	       " -m, --minimum <num>  the minimum extent length to discard\n"
	       " -p, --partition <N>  the filesystem is partition N of this disk image\n"
	       " -n, --dry-run        do everything but discard; report the exact bytes\n"
	       " -s, --secure         secure discard (BLKSECDISCARD; block devices only)\n"
	       " -z, --zeroout        write zeroes instead of discarding\n"
	       "     --list           print each range discarded: start and length in\n"
	       "                      bytes of the file or device named, after alignment\n"
	       "     --no-verify      trust the bitmap, skip checking who uses each block,\n"
	       "                      directory entries and summary counts;\n"
	       "                      safe only right after a full e2fsck -f\n"
	       " -f, --force          trim despite an unclean state (not when in use)\n"
	       "     --fsck[=force]   run e2fsck -p first (force: -f -p), trim only if it\n"
	       "                      exits 0 or 1; with -n, e2fsck runs with -n\n"
	       " -v, --verbose        print the number of bytes discarded\n"
	       " -q, --quiet          print nothing but errors\n"
	       " -h, --help           display this help\n"
	       " -V, --version        display version\n\n"
	       "Arguments:\n"
	       " <num> may be followed by K, M, G, T, P, E (powers of 1024, KiB too)\n"
	       " or KB, MB, GB ... (powers of 1000).\n\n"
	       "Exit status:\n"
	       "  0  success            1  operational error   2  discard unsupported\n"
	       "  3  usage error       32  interrupted\n"
	       " 10  mounted or in use         11  not an ext2/3/4 filesystem\n"
	       " 12  unsupported feature       13  not clean: run e2fsck -f\n"
	       " 14  journal needs recovery    15  orphan inodes pending\n"
	       " 16  damaged metadata          17  device smaller than filesystem\n"
	       " 18  in use by another node (MMP)\n"
	       " 19  bitmap marks in-use blocks free\n"
	       " 20  e2fsck (--fsck) wants a reboot first\n"
	       " 21  e2fsck left errors, failed, or could not run\n"
	       " 22  group summary counts disagree with the bitmaps\n"
	       " 23  a directory entry names an unused inode\n"
	       " 24  partition table overlaps, or -p names a container\n"
	       " A refusal (10-24) discards nothing.\n\n"
	       "For more details see e2trim(8).\n", program_name);
	exit(EXIT_OK);
}

static void __attribute__((__noreturn__)) bad_usage(const char *fmt,
						       const char *arg)
{
	fprintf(stderr, "%s: ", program_name);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s --help' for more information.\n",
		program_name);
	exit(EXIT_USAGE);
}

static uint64_t size_arg(const char *what, const char *arg)
{
	uint64_t val;
	int rc = parse_size(arg, &val);

	if (rc == -ERANGE)
		bad_usage("%s: number too large", arg);
	if (rc)
		bad_usage(what, arg);
	return val;
}

static unsigned int partition_arg(const char *arg)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (errno || *end || end == arg || n < 1 || n > 4096)
		bad_usage("invalid partition number: %s", arg);
	return n;
}

enum { OPT_LIST = 256, OPT_NO_VERIFY, OPT_FSCK };

static void parse_args(int argc, char **argv, struct e2trim_control *ctl)
{
	static const struct option longopts[] = {
		{ "offset",  required_argument, NULL, 'o' },
		{ "length",  required_argument, NULL, 'l' },
		{ "minimum", required_argument, NULL, 'm' },
		{ "partition", required_argument, NULL, 'p' },
		{ "dry-run", no_argument,       NULL, 'n' },
		{ "secure",  no_argument,       NULL, 's' },
		{ "zeroout", no_argument,       NULL, 'z' },
		{ "list",    no_argument,       NULL, OPT_LIST },
		{ "no-verify", no_argument,     NULL, OPT_NO_VERIFY },
		{ "fsck",    optional_argument, NULL, OPT_FSCK },
		{ "force",   no_argument,       NULL, 'f' },
		{ "verbose", no_argument,       NULL, 'v' },
		{ "quiet",   no_argument,       NULL, 'q' },
		{ "help",    no_argument,       NULL, 'h' },
		{ "version", no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "o:l:m:p:nszfvqhV", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'o':
			ctl->start_bytes = size_arg("invalid offset: %s", optarg);
			break;
		case 'l':
			ctl->len_bytes = size_arg("invalid length: %s", optarg);
			break;
		case 'm':
			ctl->minlen_bytes = size_arg("invalid minimum: %s",
						     optarg);
			break;
		case 'p':
			ctl->partition = partition_arg(optarg);
			break;
		case 'n':
			ctl->dryrun = 1;
			break;
		case 's':
		case 'z':
			if (ctl->mode != TRIM_DISCARD)
				bad_usage("%s", "--secure and --zeroout "
					  "exclude each other");
			ctl->mode = c == 's' ? TRIM_SECURE : TRIM_ZEROOUT;
			break;
		case OPT_LIST:
			ctl->list = 1;
			break;
		case OPT_NO_VERIFY:
			ctl->no_verify = 1;
			break;
		case OPT_FSCK:
			if (optarg && strcmp(optarg, "force"))
				bad_usage("invalid --fsck argument: %s "
					  "(only --fsck=force)", optarg);
			ctl->fsck = optarg ? FSCK_FORCE : FSCK_PREEN;
			break;
		case 'f':
			ctl->force = 1;
			break;
		case 'v':
			ctl->verbose = 1;
			break;
		case 'q':
			ctl->quiet = 1;
			break;
		case 'h':
			usage();
		case 'V':
			printf("%s %s\n", program_name, E2TRIM_VERSION);
			exit(EXIT_OK);
		default:
			fprintf(stderr, "Try '%s --help' for more information.\n",
				program_name);
			exit(EXIT_USAGE);
		}
	}
	if (optind == argc)
		bad_usage("%s", "no device or image specified");
	if (optind + 1 < argc)
		bad_usage("unexpected argument: %s", argv[optind + 1]);
	ctl->device = argv[optind];
}

/* FITRIM's rules: the range must start inside and span a whole block. */
static int check_range(const struct e2trim_control *ctl,
		       const struct plan_geometry *geo,
		       const struct plan_range *range)
{
	struct plan_blocks blk;
	char a[HUMAN_SIZE_LEN], b[HUMAN_SIZE_LEN];

	if (!plan_check_range(geo, range, &blk))
		return EXIT_OK;
	if (range->len_bytes < geo->block_size)
		fprintf(stderr, "%s: %s: length must be at least one block "
			"(%" PRIu32 " bytes)\n", program_name, ctl->device,
			geo->block_size);
	else
		fprintf(stderr, "%s: %s: offset %s is not inside the "
			"filesystem (%s)\n", program_name, ctl->device,
			size_to_human(range->start_bytes, a, sizeof(a)),
			size_to_human(geo->blocks_count * geo->block_size, b,
				      sizeof(b)));
	return EXIT_USAGE;
}

struct trim_run {
	const struct e2trim_control *ctl;
	struct target target;
};

/*
 * --list shows what the target is given to discard: the extent trimmed
 * inward to the granularity, in bytes of the file or device named (with
 * --partition, shifted by the partition's start), so that the numbers
 * can be fed to fallocate --punch-hole or blkdiscard as they are.
 */
static int emit_extent(void *priv, uint64_t start_bytes, uint64_t len_bytes)
{
	struct trim_run *run = priv;
	uint64_t s = start_bytes, e = start_bytes + len_bytes;

	if (target_align(&run->target, &s, &e))
		report_extent(run->ctl, run->target.base_bytes + s, e - s);
	return target_trim(&run->target, start_bytes, len_bytes);
}

static int open_target(const struct e2trim_control *ctl,
		       const struct e2trim_fs *tfs, struct target *t)
{
	int rc;

	memset(t, 0, sizeof(*t));
	t->name = ctl->device;
	t->dryrun = ctl->dryrun;
	t->base_bytes = tfs->offset_bytes;
	if (tfs->is_blkdev)
		rc = target_blkdev_init(t, tfs->fd, ctl->mode);
	else
		rc = target_file_init(t, tfs->fd, ctl->mode);
	if (rc == -EOPNOTSUPP) {
		fprintf(stderr, "%s: %s: %s\n", program_name, ctl->device,
			ctl->mode == TRIM_SECURE && !tfs->is_blkdev ?
			"--secure works on block devices only" :
			"the device does not support discard");
		return EXIT_UNSUPPORTED;
	}
	if (rc) {
		fprintf(stderr, "%s: %s: cannot read discard limits: %s\n",
			program_name, ctl->device, strerror(-rc));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

/* A run that stopped before the end: say why and what was done. */
static int stopped(const struct e2trim_control *ctl, const struct target *t)
{
	static const char *const op[] = {
		[TRIM_DISCARD] = "discard", [TRIM_SECURE] = "secure discard",
		[TRIM_ZEROOUT] = "zeroout",
	};
	char why[160];

	if (!t->error) {
		report_partial(ctl, t, "interrupted");
		return EXIT_INTERRUPTED;
	}
	snprintf(why, sizeof(why), "%s at byte %" PRIu64 " failed: %s",
		 op[t->mode], t->error_start, strerror(-t->error));
	report_partial(ctl, t, why);
	if (t->error == -EOPNOTSUPP && t->stats.requests == 0)
		return EXIT_UNSUPPORTED;
	return EXIT_ERROR;
}

/*
 * Verification alone, timed for tests/bench.sh when E2TRIM_TIME_VERIFY
 * is set: "verify: SECONDS" on stderr.
 */
static int timed_verify(const struct e2trim_control *ctl,
			struct e2trim_fs *tfs, const struct plan_source *src,
			const struct plan_geometry *geo)
{
	struct timespec t0, t1;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = verify_free_space(ctl, tfs->fs, tfs->fd, tfs->offset_bytes,
				src, geo,
				bitmap_stream_free_clusters(tfs->stream));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (getenv("E2TRIM_TIME_VERIFY"))
		fprintf(stderr, "verify: %.3f\n", (double)(t1.tv_sec - t0.tv_sec) +
			(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return ret;
}

static int trim(const struct e2trim_control *ctl, struct e2trim_fs *tfs)
{
	struct plan_range range = { ctl->start_bytes, ctl->len_bytes,
				    ctl->minlen_bytes };
	struct trim_run run = { .ctl = ctl };
	struct plan_geometry geo;
	struct plan_source src;
	struct plan_stats st;
	errcode_t err;
	int ret;

	bitmap_geometry(tfs->fs, &geo);
	bitmap_stream_source(tfs->stream, &src);
	ret = check_range(ctl, &geo, &range);
	/* before the target is opened: a refusal must trim nothing */
	if (!ret && !ctl->no_verify)
		ret = timed_verify(ctl, tfs, &src, &geo);
	if (!ret)
		ret = open_target(ctl, tfs, &run.target);
	if (ret)
		return ret;

	/*
	 * Nothing shorter than the granularity can be freed: in effect the
	 * minimum is raised to it.  The target's inward alignment drops such
	 * extents (and counts them), and --list leaves them out.  Say so when
	 * that leaves out whole filesystem blocks.
	 */
	if (range.minlen_bytes < run.target.lim.granularity &&
	    run.target.lim.granularity > geo.block_size)
		report_minlen_raised(ctl, run.target.lim.granularity);

	target_catch_signals();
	err = plan_run(&geo, &range, &src, emit_extent, &run, &st);
	/* requests still in flight finish, whatever stopped the plan */
	target_finish(&run.target);
	if (err == (errcode_t)-1 || run.target.error)
		ret = stopped(ctl, &run.target);
	else if (err) {
		com_err(program_name, err, "while scanning the block bitmap of %s",
			ctl->device);
		report_partial(ctl, &run.target, "stopped");
		ret = EXIT_ERROR;
	} else {
		report_summary(ctl, &st, &run.target);
	}
	target_close(&run.target);
	return ret;
}

int main(int argc, char **argv)
{
	struct e2trim_control ctl = { .len_bytes = UINT64_MAX };
	struct e2trim_fs tfs;
	int ret;

	parse_args(argc, argv, &ctl);
	add_error_table(&et_ext2_error_table);

	/* e2fsck first, alone: the open below trusts nothing from before */
	if (ctl.fsck != FSCK_NONE) {
		ret = fsck_run(&ctl);
		if (ret)
			return ret;
		/* e2fsck -f has just checked every block the bitmap frees */
		if (ctl.fsck == FSCK_FORCE)
			ctl.no_verify = 1;
	}
	ret = e2trim_fs_open(&ctl, &tfs);
	if (ret)
		return ret;
	ret = trim(&ctl, &tfs);
	e2trim_fs_close(&tfs);
	return ret;
}
