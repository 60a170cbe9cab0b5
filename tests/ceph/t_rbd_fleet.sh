#!/bin/bash
# A fleet in one list (issue 28, point 5): an image file, a qcow2, a block
# device and two RBD images in one --targets-from list with -j 2, then a
# partitioned RBD image with -p all -j 2.
#  - the two RBD images run at the same time (they share no disk): both
#    are held at the start of trimming at once, which they could not be if
#    -j ran them one after the other;
#  - two partitions of one RBD image never run at once (the second would
#    find the first one's qemu-nbd watching and be refused with 26);
#  - every target gives back space by its own oracle (the file's or the
#    loop device's backing file's allocated size, the qcow2's, rbd du
#    --exact), every file reads back the same, e2fsck -fn is clean, and
#    the JSON a monitoring system reads says so per target.
. "$(dirname "$0")/ceph_lib.sh"
own_images fleet1 fleet2 fleetdisk
ERR=$T/err
# files_of IMG[?offset=N]: "name sha256" of every regular file in /
files_of() {
	local f
	e2fsck -fn "$1" >"$T/fsck.log" 2>&1 || { cat "$T/fsck.log"; fail "e2fsck -fn on $1"; }
	dfs_read "$1" "ls -p /" | awk -F/ '$6 ~ /^f/ {print $6}' | while read -r f; do
		dfs_read "$1" "dump /$f $T/d.bin" >/dev/null
		echo "$f $(sha_of "$T/d.bin")"
	done
	rm -f "$T/d.bin"
}
rbd_files() {	# IMAGE [OFFSET]: files_of the exported image
	rbd -c "$C" export --no-progress "$1" "$T/x.img" >/dev/null 2>&1 || fail "rbd export $1"
	files_of "$T/x.img${2:+?offset=$2}"
	rm -f "$T/x.img"
}

# one aged ext4, five copies
mkfs "$T/a.img" 64M -t ext4 -b 4096
age "$T/a.img" 5
files_of "$T/a.img" >"$T/want"
[ "$(wc -l <"$T/want")" -ge 20 ] || fail "too few files in the aged ext4"
cp --sparse=always "$T/a.img" "$T/c.img"
qemu-img convert -O qcow2 "$T/a.img" "$T/b.qcow2" || fail "qemu-img convert"
DEV=$(loop_attach "$T/c.img")
# a fresh image of NAME from FILE (one a failed run left goes first)
rbd_import() {
	rbd -c "$C" snap purge --no-progress "$2" >/dev/null 2>&1
	rbd -c "$C" rm --no-progress "$2" >/dev/null 2>&1
	rbd -c "$C" import --no-progress "$1" "$2" || fail "rbd import $2"
}
for i in 1 2; do rbd_import "$T/a.img" "rbd/fleet$i"; done
a0=$(alloc_bytes "$T/a.img") b0=$(alloc_bytes "$T/b.qcow2") c0=$(alloc_bytes "$T/c.img")
r10=$(du_exact rbd/fleet1) r20=$(du_exact rbd/fleet2)

cat >"$T/list" <<EOF
# the two RBD images first: with -j 2 they must run side by side
rbd:rbd/fleet1:conf=$C
rbd:rbd/fleet2:conf=$C
$T/a.img
$T/b.qcow2
$DEV
EOF
pause_arm trimming@start
"$E2TRIM" -j 2 --json --targets-from "$T/list" >"$T/j" 2>"$ERR" &
pid=$!
echo "$pid" >"$T/pause.pid"
PAUSE=$T/pause
pause_wait; first=$PAUSED
pause_wait; second=$PAUSED
note "held at once: $first | $second"
pause_release 5
wait "$pid"; RC=$?
pause_disarm
cat "$ERR"
assert_rc 0 "the mixed list"

python3 - "$T/j" <<'PY' >"$T/summary" || { cat "$T/j"; fail "the JSON report"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["exit_code"] == 0, d["exit_code"]
assert len(d["targets"]) == 5, len(d["targets"])
for t in d["targets"]:
    r = t["result"]
    assert t["status"] == "trimmed" and t["exit_code"] == 0, (t["target"], t["status"])
    assert r["bytes_trimmed"] > 0 and r["requests"] > 0, t["target"]
    name = t["target"].split(":conf=")[0]
    if r["allocated_before"] is None:	# a block device: nothing says
        assert t["device"] is not None, name
        print("%s: %d KiB trimmed" % (name, r["bytes_trimmed"] >> 10))
        continue
    assert r["allocated_after"] < r["allocated_before"], name
    print("%s: allocated %d -> %d KiB" % (name, r["allocated_before"] >> 10,
          r["allocated_after"] >> 10))
PY
sed 's/^/  /' "$T/summary"

# the oracles, none of them e2trim's
[ "$(alloc_bytes "$T/a.img")" -lt "$a0" ] || fail "the image file was not trimmed"
[ "$(alloc_bytes "$T/b.qcow2")" -lt "$b0" ] || fail "the qcow2 was not trimmed"
[ "$(alloc_bytes "$T/c.img")" -lt "$c0" ] || fail "the loop device was not trimmed"
[ "$(du_exact rbd/fleet1)" -lt "$r10" ] || fail "rbd/fleet1 was not trimmed"
[ "$(du_exact rbd/fleet2)" -lt "$r20" ] || fail "rbd/fleet2 was not trimmed"
losetup -d "$DEV"
qemu-img convert -O raw "$T/b.qcow2" "$T/b.img" || fail "qemu-img convert back"
for img in "$T/a.img" "$T/b.img" "$T/c.img"; do
	files_of "$img" >"$T/got"
	diff "$T/want" "$T/got" >/dev/null || fail "a file changed in $img"
done
for i in 1 2; do
	rbd_files "rbd/fleet$i" >"$T/got"
	diff "$T/want" "$T/got" >/dev/null || fail "a file changed in rbd/fleet$i"
done
note "5 targets, -j 2: every one trimmed, $(wc -l <"$T/want") files each unchanged"

# a GPT disk with two ext4 partitions in RBD, -p all -j 2: one at a time
truncate -s 128M "$T/disk.img"
printf 'label: gpt\nstart=2048, size=61440, type=L\nstart=63488, size=131072, type=L\n' |
	sfdisk -q "$T/disk.img" || fail "sfdisk"
o1=$((2048 * 512)) o2=$((63488 * 512))
mke2fs -q -F -t ext4 -E nodiscard,offset=$o1 "$T/disk.img" 30M || fail "mke2fs 1"
mke2fs -q -F -t ext4 -E nodiscard,offset=$o2 "$T/disk.img" 64M || fail "mke2fs 2"
age_part "$T/disk.img" $o1 30 7 41
age_part "$T/disk.img" $o2 30 7 41
files_of "$T/disk.img?offset=$o1" >"$T/want1"
files_of "$T/disk.img?offset=$o2" >"$T/want2"
rbd_import "$T/disk.img" rbd/fleetdisk
d0=$(du_exact rbd/fleetdisk)
E2TRIM_TEST_DISK_JOBS=1 "$E2TRIM" -j 2 -p all --json "rbd:rbd/fleetdisk:conf=$C" \
	>"$T/j2" 2>"$ERR"; RC=$?
cat "$ERR"
assert_rc 0 "-p all -j 2 on an RBD disk with two ext4 partitions"
assert_grep "most jobs at once on one disk: 1" "$ERR" "-j on one RBD image"
python3 - "$T/j2" <<'PY' || { cat "$T/j2"; fail "the -p all JSON"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert [t["partition"] for t in d["targets"]] == [1, 2], d["targets"]
assert all(t["status"] == "trimmed" and t["result"]["bytes_trimmed"] > 0
           for t in d["targets"])
PY
[ "$(du_exact rbd/fleetdisk)" -lt "$d0" ] || fail "rbd/fleetdisk was not trimmed"
rbd_files rbd/fleetdisk "$o1" >"$T/got"
diff "$T/want1" "$T/got" >/dev/null || fail "a file changed in partition 1"
rbd_files rbd/fleetdisk "$o2" >"$T/got"
diff "$T/want2" "$T/got" >/dev/null || fail "a file changed in partition 2"
note "-p all -j 2: both partitions of one RBD image trimmed, one at a time"
# one image named twice (another option after it) is one target, and
# its snapshot another one
rbd -c "$C" snap create --no-progress rbd/fleet1@s >/dev/null 2>&1 || fail "rbd snap create"
"$E2TRIM" -n -v -j 2 "rbd:rbd/fleet1:conf=$C" "rbd:rbd/fleet1:conf=$C:id=admin" \
	"rbd:rbd/fleet1@s:conf=$C" >"$T/out" 2>"$ERR"; RC=$?
cat "$T/out" "$ERR"
assert_rc 64 "an RBD image named twice"
assert_grep "fleet1:conf=$C:id=admin: .*the same as rbd:rbd/fleet1:conf=$C" "$ERR" "the second name"
[ "$(grep -c ") trimmed (dry run)$" "$T/out")" = 2 ] || fail "the image and its snapshot were not both read"
rbd -c "$C" snap purge --no-progress rbd/fleet1 >/dev/null 2>&1
note "an RBD image named twice: the second refused, its snapshot read"
for i in fleet1 fleet2 fleetdisk; do rbd -c "$C" rm --no-progress "rbd/$i" >/dev/null 2>&1; done
exit 0
