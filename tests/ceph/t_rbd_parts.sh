#!/bin/bash
# -p all on a partitioned RBD image (a GPT disk: partition 1 raw bytes,
# partition 2 an aged ext4), and RBD images from --targets-from with -j:
# only free space inside the ext4 is freed, partition 1 and every file
# read back the same, e2fsck -fn is clean.
. "$(dirname "$0")/ceph_lib.sh"
own_images disk1 disk2
OUT=$T/out ERR=$T/err
# what must survive: partition 1's bytes, partition 2's files, its fsck
survivors() {	# IMAGE
	rbd -c "$C" export --no-progress "$1" "$T/x.img" >/dev/null 2>&1 || fail "rbd export $1"
	dd if="$T/x.img" bs=512 skip=2048 count=65536 status=none | sha256sum | cut -d' ' -f1
	e2fsck -fn "$T/x.img?offset=$off" >/dev/null 2>&1 || fail "e2fsck -fn on partition 2 of $1"
	dfs_read "$T/x.img?offset=$off" "ls -p /" | awk -F/ '$6 ~ /^f/ {print $6}' | while read -r f; do
		dfs_read "$T/x.img?offset=$off" "dump /$f $T/d.bin" >/dev/null
		echo "$f $(sha_of "$T/d.bin")"
	done
	rm -f "$T/x.img" "$T/d.bin"
}

gpt_disk "$T/disk.img"
for i in 1 2; do rbd -c "$C" import --no-progress "$T/disk.img" "rbd/disk$i" || fail "rbd import"; done
survivors rbd/disk1 >"$T/before"
[ "$(wc -l <"$T/before")" -ge 10 ] || fail "too few files"
before=$(du_exact rbd/disk1)

"$E2TRIM" -v -p all "rbd:rbd/disk1:conf=$C" >"$OUT" 2>"$ERR"; RC=$?
cat "$OUT" "$ERR"
assert_rc 0 "-p all on a partitioned RBD image"
after=$(du_exact rbd/disk1)
[ "$after" -lt "$before" ] || fail "rbd du --exact did not drop: $before -> $after"
survivors rbd/disk1 >"$T/after"
diff "$T/before" "$T/after" || fail "-p all changed partition 1 or a file"
note "-p all: rbd du --exact $((before >> 20)) -> $((after >> 20)) MiB, partition 1 and $(($(wc -l <"$T/after") - 1)) files unchanged"

# two images from a list, two at a time: each as trimmed alone
printf 'rbd:rbd/disk1:conf=%s\nrbd:rbd/disk2:conf=%s\n' "$C" "$C" >"$T/list"
"$E2TRIM" -j 2 -p all --json --targets-from "$T/list" >"$T/j" 2>"$ERR"; RC=$?
assert_rc 0 "--targets-from with two RBD images"
assert_eq "$(du_exact rbd/disk2)" "$after" "rbd du --exact of the second image"
assert_eq "$(du_exact rbd/disk1)" "$after" "rbd du --exact of the first image, again"
survivors rbd/disk2 >"$T/after2"
diff "$T/before" "$T/after2" || fail "the list's run changed partition 1 or a file"
note "--targets-from -j 2: both images at $((after >> 20)) MiB"
for i in 1 2; do rbd -c "$C" rm --no-progress "rbd/disk$i" >/dev/null 2>&1; done
exit 0
