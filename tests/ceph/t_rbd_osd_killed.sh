#!/bin/bash
# The OSD killed (SIGKILL, a crash) in the middle of a trim: e2trim exits
# with an I/O error within librados's time-out (the name sets
# rados_osd_op_timeout=5 here; e2trim's own default is 60 s) instead of
# hanging, and once the OSD is back every file reads the same and
# e2fsck -fn is clean.  Held at its first report with bytes trimmed (the
# pause hook, no timing).
. "$(dirname "$0")/ceph_lib.sh"
own_images crash
: "${CEPH_DIR:?run through tests/ceph/run.sh}"
IMG=rbd/crash
SPEC="rbd:$IMG:conf=$C:rados_osd_op_timeout=5"
here=$(cd "$(dirname "$0")" && pwd)
restart() { [ -n "${OSD_DOWN:-}" ] || return 0; OSD_DOWN=; bash "$here/cluster.sh" start-osd "$CEPH_DIR"; }
# the OSD is back for the next test, pass or fail
# shellcheck disable=SC2317  # called by the trap
on_exit() { local rc=$?; restart; ceph_exit "$rc"; }
trap on_exit EXIT

mkfs "$T/fs.img" 256M -t ext4 -b 4096
age "$T/fs.img" 11
rbd -c "$C" import --no-progress "$T/fs.img" "$IMG" || fail "rbd import"
files_sha() {
	local f
	rbd -c "$C" export --no-progress "$IMG" "$T/x.img" >/dev/null 2>&1 || fail "rbd export"
	e2fsck -fn "$T/x.img" >"$T/fsck.log" 2>&1 || { cat "$T/fsck.log"; fail "e2fsck -fn"; }
	dfs_read "$T/x.img" "ls -p /" | awk -F/ '$6 ~ /^f/ {print $6}' | while read -r f; do
		dfs_read "$T/x.img" "dump /$f $T/d.bin" >/dev/null
		echo "$f $(sha_of "$T/d.bin")"
	done
	rm -f "$T/x.img" "$T/d.bin"
}
files_sha >"$T/before"
[ "$(wc -l <"$T/before")" -ge 20 ] || fail "too few files"

E2TRIM_TEST_PAUSE_AT=mid pause_e2trim "$SPEC"
bash "$here/cluster.sh" kill-osd "$CEPH_DIR"
OSD_DOWN=1
start=$(date +%s)
resume_e2trim
secs=$(( $(date +%s) - start ))
cat "$T/out" "$T/err"
[ "$RC" != 0 ] || fail "e2trim said it trimmed everything with its OSD gone"
assert_eq "$RC" 1 "the exit code of a trim whose OSD died"
grep -q "failed" "$T/err" || fail "no message of the failed discard"
note "OSD killed mid-run: exit $RC after $secs s: $(head -1 "$T/err")"
restart
files_sha >"$T/after"
diff "$T/before" "$T/after" || fail "a file changed"
note "$(wc -l <"$T/after") files unchanged and e2fsck -fn clean once the OSD is back"
exit 0
