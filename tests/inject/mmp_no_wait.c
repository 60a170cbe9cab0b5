// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mmp_no_wait.c - LD_PRELOAD shim: sleep(3) returns at once
 *
 * libext2fs's ext2fs_mmp_start() writes a new sequence into the MMP
 * block, then sleep()s twice the check interval plus one second (never
 * under 11 s: the interval is raised to EXT4_MMP_MIN_CHECK_INTERVAL, 5 s)
 * and reads the block back, so as to see another node that uses the
 * filesystem.  Every open of an MMP filesystem for writing costs those
 * 11 s, e2trim's and e2fsck's alike.
 *
 * Tests that stop e2trim on an MMP filesystem many times, to see what the
 * stop leaves behind, are not about another node: they load this shim
 * (tests/lib.sh: mmp_no_wait) and the wait is skipped.  The protocol is
 * still run (the sequence written, read back and compared, the block
 * marked clean at the end); only the time another node would have had to
 * answer is gone.  t_gate_mmp_live, which is about that other node, never
 * loads it.  e2trim itself calls no sleep(); its progress output sleeps
 * with usleep(), which this leaves alone.
 */
#include <unistd.h>

unsigned int sleep(unsigned int seconds)
{
	(void)seconds;
	return 0;
}
