#!/bin/bash
# Many targets in one run: e2trim a.img b.img ..., --targets-from, -j.
# Output comes in the order given, one target's lines after the other's,
# whatever -j says; a target that does not exist, is not ext or is given
# twice (under another name too) gets its own error, and the others are
# trimmed; the exit status is 0 (all), 64 (some failed), 32 (all
# failed), a single target's own code when there is one.  As root: two
# filesystems of one image, one through a loop device, never run at
# once (the image's open would find the loop device held).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

seed=1
for n in a b c d; do
	mkfs "$T/$n.img" 32M -t ext4
	age "$T/$n.img" $((seed++))
done
head -c 1M /dev/zero >"$T/zeros.img"
cd "$T" || fail "cd"

# the reference: each alone, one after the other
: >"$T/ref"
for n in a b c d; do
	run_e2trim -n -v "$n.img"
	assert_rc 0 "$n.img alone"
	cat "$OUT" >>"$T/ref"
done
for j in 1 2 4; do
	run_e2trim -n -v -j $j a.img b.img c.img d.img
	assert_rc 0 "-j $j: all succeed"
	cmp -s "$OUT" "$T/ref" || { diff "$OUT" "$T/ref"; fail "-j $j: output not in order"; }
	[ ! -s "$ERR" ] || { cat "$ERR"; fail "-j $j: messages on stderr"; }
done

# errors in between: each in its place, the rest trimmed, exit 64
ln -s "$T/b.img" "$T/link-to-b"
run_e2trim -n -v -j 3 a.img zeros.img ./b.img missing.img link-to-b c.img
assert_rc 64 "some failed"
sed -n 's/^\([^:]*\): .* trimmed (dry run)$/\1/p' "$OUT" | tr '\n' ' ' >"$T/done"
assert_eq "$(cat "$T/done")" "a.img ./b.img c.img " "the good ones trimmed, in order"
cut -d: -f2 "$ERR" | tr '\n' ' ' >"$T/bad"
assert_eq "$(cat "$T/bad")" " zeros.img  missing.img  link-to-b " "one error each, in order"
assert_grep "zeros.img: does not hold an ext2/ext3/ext4 filesystem" "$ERR" "not ext"
assert_grep "missing.img: cannot open: No such file" "$ERR" "missing"
assert_grep "link-to-b: is given twice (the same as ./b.img)" "$ERR" "given twice"

run_e2trim -n zeros.img missing.img
assert_rc 32 "all failed"
run_e2trim -n zeros.img
assert_rc 11 "a single target keeps its own code"

# --targets-from: comments, blank lines, spaces; a bad line by number
printf '# images\n\n  a.img  \nb.img\nbad\001name\n# the end\n' >"$T/list"
run_e2trim -n -v --targets-from "$T/list" c.img
assert_rc 64 "--targets-from with a bad line"
assert_eq "$(sed -n 's/^\([^:]*\): .* trimmed (dry run)$/\1/p' "$OUT" | tr '\n' ' ')" \
	"c.img a.img b.img " "arguments first, then the file's lines"
assert_grep "$T/list:5: line 5 holds a control character; fix the --targets-from file" "$ERR" \
	"the bad line by its number"
printf 'a.img\nd.img\n' | "$E2TRIM" -n -v --targets-from - >"$T/out" 2>"$T/err" ||
	fail "--targets-from -"
assert_eq "$(grep -c 'trimmed (dry run)' "$T/out")" 2 "--targets-from - reads stdin"
run_e2trim -n --targets-from "$T/nonexistent"
assert_rc 3 "an unreadable list"

# a real run of several: each trimmed, the files shrink, all clean
alloc0=()
for n in a b c d; do alloc0+=("$(alloc_bytes "$n.img")"); done
run_e2trim -v -j 4 a.img b.img c.img d.img
assert_rc 0 "trim four at once"
i=0
for n in a b c d; do
	bytes=$(sed -n "s/^$n.img: .*(\([0-9]*\) bytes) trimmed$/\1/p" "$OUT")
	assert_eq "$((alloc0[i] - $(alloc_bytes "$n.img")))" "$bytes" "$n.img: drop of allocated size"
	e2fsck -fn "$n.img" >/dev/null 2>&1 || fail "$n.img: e2fsck after"
	i=$((i + 1))
done

# one disk: partition 1 through a loop device and partition 3 of the same
# image never at once, or the image's open would find the loop held
if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
	img="$T/disk.img"
	truncate -s 100M "$img"
	printf 'label: dos\nstart=2048, size=61440\nstart=63488, size=131072\n' |
		sfdisk -q "$img" || fail "sfdisk"
	o1=$((2048 * 512)) o2=$((63488 * 512))
	mke2fs -q -F -t ext4 -E nodiscard,offset=$o1 "$img" 30M || fail "mke2fs 1"
	mke2fs -q -F -t ext4 -E nodiscard,offset=$o2 "$img" 64M || fail "mke2fs 2"
	dev=$(loop_attach "$img" -o $o1 --sizelimit $((61440 * 512)))
	# whether two jobs would overlap in time is luck; the scheduler's
	# own count of jobs running at once on one disk is not: both are
	# pending when the two workers start, so a scheduler that let them
	# share the disk would count 2 every time
	export E2TRIM_TEST_DISK_JOBS=1
	run_e2trim -n -j 2 "$dev" "$img?offset=$o2"
	assert_rc 0 "same disk, -j 2"
	assert_grep "^e2trim: most jobs at once on one disk: 1$" "$ERR" "same disk, -j 2: one job at a time"
	unset E2TRIM_TEST_DISK_JOBS
	run_e2trim -n "$dev" "$img?offset=$o1"
	assert_rc 64 "the loop device and its file at the same offset"
	assert_grep "is given twice (the same as $dev)" "$ERR" "given twice through a loop device"
elif [ "${CI:-}" = true ]; then
	fail "needs root and loop devices under CI"
fi
exit 0
