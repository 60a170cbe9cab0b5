// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * usage.c - e2trim --help: the options, the exit codes, the targets
 *
 * Kept apart from e2trim.c, which parses what this text describes;
 * t_lint_scripts_man holds the two and e2trim(8) together.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

#define program_name program_invocation_short_name

void usage(void)
{
	printf("Usage:\n"
	       " %s [options] <device|image|nbd-uri>...\n\n"
	       "Discard the free space of an unmounted ext2/ext3/ext4 filesystem.\n\n"
	       "Options:\n"
	       " -o, --offset <num>   the offset in bytes to start discarding from\n"
	       " -l, --length <num>   the number of bytes to discard\n"
	       " -m, --minimum <num>  the minimum extent length to discard\n"
	       " -p, --partition <N>  the filesystem is partition N of this disk image;\n"
	       "                      all: every ext2/3/4 partition of it, one by one\n"
	       "     --format <fmt>   the image's format (qcow2, vmdk, vdi, vhdx, raw...);\n"
	       "                      default: told by its first bytes, unless it\n"
	       "                      also reads as raw (then it must be given)\n"
	       " -n, --dry-run        do everything but discard; report the exact bytes\n"
	       " -s, --secure         secure discard (BLKSECDISCARD; block devices only)\n"
	       " -z, --zeroout        write zeroes instead of discarding (the device\n"
	       "                      zeroes every free block; may allocate them)\n"
	       "     --zero-fill      every free block zero after (zerofree's job): an\n"
	       "                      image's free data punched out unread, a device\n"
	       "                      read and only what is not zero zeroed; holes\n"
	       "                      and thin volumes do not grow\n"
	       "     --histogram      print the free extent sizes, as e2freefrag\n"
	       "     --progress       show progress even when stderr is not a terminal\n"
	       "     --no-progress    never show progress\n"
	       "     --list           print each range discarded: start and length in\n"
	       "                      bytes of the file or device named, after alignment;\n"
	       "                      several targets: the target first (as lsblk -r)\n"
	       "     --no-verify      trust the bitmap, skip checking who uses each block,\n"
	       "                      directory entries and summary counts;\n"
	       "                      safe only right after a full e2fsck -f\n"
	       " -f, --force          trim despite an unclean state (not when in use)\n"
	       "     --fsck[=force]   run e2fsck -p first (force: -f -p), trim only if it\n"
	       "                      exits 0 or 1; with -n, e2fsck runs with -n;\n"
	       "                      -p N: on a loop device over the partition;\n"
	       "                      a VM image: through nbdfuse and qemu-nbd\n"
	       " -v, --verbose        print the number of bytes discarded; twice:\n"
	       "                      also the notes (the minimum raised)\n"
	       "     --json           print the results as one JSON document on stdout\n"
	       "                      (valid UTF-8: exact bytes in \"<key>_raw\", hex)\n"
	       "     --targets-from <file>\n"
	       "                      also every target listed in file, one a line\n"
	       "                      ('-': standard input; # starts a comment;\n"
	       "                      a CRLF line end is accepted); may be repeated\n"
	       "     --quiet-unsupported\n"
	       "                      a disk that cannot discard is no error: no\n"
	       "                      message, exit status 0 (as fstrim's option)\n"
	       " -j, --jobs <N>       trim up to N targets at once, never two on one disk\n"
	       " -q, --quiet          print nothing but errors (and --list, --histogram,\n"
	       "                      and --progress when it is given too)\n"
	       " -h, --help           display this help\n"
	       " -V, --version        display version\n\n"
	       "Arguments:\n"
	       " <num> may be followed by K, M, G, T, P, E (powers of 1024, KiB too)\n"
	       " or KB, MB, GB ... (powers of 1000).\n\n"
	       "Exit status:\n"
	       "  0  success            1  operational error   2  discard unsupported\n"
	       "  3  usage error      130  interrupted (SIGINT, SIGTERM, SIGHUP)\n"
	       " 32  every target failed       64  some targets failed\n"
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
	       " 24  partition table overlaps, or -p names a container,\n"
	       "     or another signature (LVM, RAID...) shares its bytes\n"
	       " 25  the NBD server cannot trim\n"
	       " 26  the VM image is open in another program (image lock; an RBD\n"
	       "     image's watchers or locks)\n"
	       " 27  a whole-disk image: give -p all or -p N\n"
	       " A refusal (10-19, 22-27) discards nothing; nor does an e2fsck\n"
	       " failure (--fsck: 20, 21).  With several targets the exit\n"
	       " status is fstrim's: 0, 64 or 32 (or 130); a single target keeps its own.\n"
	       " A stop releases everything held (MMP, qemu-nbd, locks); output cut\n"
	       " short (SIGPIPE) exits 1.\n\n"
	       "A VM image (qcow2, vmdk, ...) is opened through qemu-nbd; an NBD URI\n"
	       "(nbd://host/export, nbd+unix:///export?socket=PATH) names a running server.\n"
	       "A Ceph RBD image is named rbd:POOL/IMAGE[@SNAP][:conf=FILE][:id=USER]\n"
	       "(read through librbd; a ':' inside a name is written '\\:'); one in use\n"
	       "(watchers, locks) is refused (26), a snapshot takes -n only (3).\n\n"
	       "For more details see e2trim(8).\n", program_name);
	exit(E2TRIM_EXIT_OK);
}

