#!/bin/bash
# The ownership check has no blind spot: on aged filesystems of several
# layouts, with special inodes, every used block that is marked free in
# turn (both ends of every used run, and random ones in between: the
# superblock and its copies, descriptors, reserved GDT, bitmaps, inode
# tables, journal, directories, extent trees, indirect and xattr blocks,
# file data) makes e2trim refuse with 19.  Each block is marked in use
# again before the next, and e2fsck -fn is clean at the end.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

# used_runs IMG FIRST_BLOCK: "first last" of every run of used blocks
used_runs() {
	local count
	count=$(dumpe2fs -h "$1" 2>/dev/null | awk '/^Block count:/ {print $3}')
	free_block_ranges "$1" | sort -n | awk -v count="$count" -v pos="$2" '
	{ if ($1 > pos) print pos, $1 - 1; pos = $2 + 1 }
	END { if (pos < count) print pos, count - 1 }'
}

check_layout() {	# name size mke2fs-options...
	local name=$1 size=$2; shift 2
	local img=$T/$name.img fdb b n=0 missed=0 want=40
	mkfs "$img" "$size" "$@"
	age "$img" 9
	printf 'x%.0s' $(seq 40) >"$T/tiny"
	head -c 1500 /dev/zero | tr '\0' v >"$T/value"
	debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF || fail "$name: debugfs"
		write $T/tiny tiny
		ea_set -f $T/value tiny user.v
		symlink slow /$(printf 'long/%.0s' $(seq 60))target
	EOF
	e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$name: not clean to begin with"; }
	fdb=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^First block:/ {print $3}')

	# both ends of every used run, and 30 random used blocks
	used_runs "$img" "$fdb" >"$T/runs"
	{ awk '{print $1; print $2}' "$T/runs"
	  awk '{for (b = $1; b <= $2; b++) print b}' "$T/runs" | shuf -n 30 --random-source=<(yes)
	} | sort -nu >"$T/sample"
	# under valgrind or the sanitizer (E2E_SAMPLE) one in five: the plain
	# pass of make check tries them all
	if [ -n "$E2E_SAMPLE" ]; then
		awk 'NR % 5 == 1' "$T/sample" >"$T/sample.5" && mv "$T/sample.5" "$T/sample"
		want=10
	fi

	while read -r b; do
		debugfs -w -R "freeb $b" "$img" >/dev/null 2>&1
		# a BLOCK_UNINIT group's bitmap is not written: nothing changed
		if debugfs -R "testb $b" "$img" 2>&1 | grep -q "not in use"; then
			run_e2trim -n "$img"
			if [ "$RC" != 19 ]; then
				missed=$((missed + 1))
				echo "block $b marked free: exit $RC" >&2
				cat "$ERR" >&2
			fi
			n=$((n + 1))
		fi
		debugfs -w -R "setb $b" "$img" >/dev/null 2>&1
	done <"$T/sample"
	[ "$missed" = 0 ] || fail "$name: $missed of $n used blocks marked free went unnoticed"
	[ "$n" -ge "$want" ] || fail "$name: only $n blocks tried"
	e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$name: not clean at the end"; }
	note "$name: each of $n used blocks, marked free, refused"
	rm -f "$img"
}

check_layout ext2-1k 32M -t ext2 -b 1024
check_layout ext3 64M -t ext3
check_layout ext4 64M -t ext4
check_layout ext4-noflex 64M -t ext4 -O ^flex_bg
check_layout ext4-metabg 64M -t ext4 -O meta_bg,^resize_inode
check_layout ext4-bigalloc 128M -t ext4 -O bigalloc -C 16384
check_layout ext4-special 64M -t ext4 -O inline_data,orphan_file,sparse_super2
exit 0
