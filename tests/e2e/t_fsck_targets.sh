#!/bin/bash
# --fsck on the targets whose refusal fix names it (issue 34): partition 2
# of a GPT disk image (-p 2) and the same disk as qcow2, each with a real
# journal transaction to replay (debugfs jo/jw/jc: a block of file jf
# rewritten).  e2fsck cannot replay at "disk.img?offset=N" (it reopens
# without the offset: exit 12), so e2trim gives it a loop device bounded
# by the table entry (its offset and size limit read while e2fsck runs),
# and a qcow2's content through nbdfuse over
# qemu-nbd.  Asserted: the refusal's fix is `e2trim --fsck -p 2 IMG` and,
# run as printed with sh -c, replays the journal (jf holds the journaled
# bytes), trims partition 2 only (partition 1 and the bytes after
# partition 2 keep their sha256), keeps every file, leaves e2fsck -fn
# clean; and nothing stays behind: no loop device over the image, no FUSE
# mount, no qemu-nbd, nothing in TMPDIR; the whole qcow2 disk without -p is
# refused (27) as a raw one is, e2fsck not run.  A stop (INT, TERM, HUP, PIPE)
# while e2fsck runs (pause point fsck@start) releases all of it too; one
# while the qcow2's mount comes up (fsck-mount@start) starts no e2fsck.
# Needs root (loop devices, FUSE).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v nbdfuse >/dev/null || skip "no nbdfuse (make deps: libnbd-bin)"

# the fix names the command: the e2trim under test
mkdir -p "$T/bin" "$T/tmp"
ln -sf "$E2TRIM" "$T/bin/e2trim"
export PATH="$T/bin:$PATH" TMPDIR="$T/tmp"

disk="$T/disk.img"
gpt_disk "$disk"		# sets $off: partition 2, 96 MiB
fs="$disk?offset=$off"
end=$((off + 196608 * 512))
# jf: one block of 'x'; the journal then holds a transaction rewriting it
# with 'y', which only a replay puts in place
bs=$(dumpe2fs -h "$fs" 2>/dev/null | awk '/^Block size:/ {print $3}')
head -c "$bs" /dev/zero | tr '\0' x >"$T/x"
head -c "$bs" /dev/zero | tr '\0' y >"$T/y"
debugfs -w -R "write $T/x jf" "$fs" >/dev/null 2>&1 || fail "debugfs write jf"
blk=$(debugfs -R "bmap jf 0" "$fs" 2>/dev/null)
[ -n "$blk" ] || fail "jf's block"
printf 'jo\njw -b %s %s\njc\n' "$blk" "$T/y" |
	debugfs -w -f - "$fs" >/dev/null 2>&1 || fail "debugfs jw"
dumpe2fs -h "$fs" 2>/dev/null | grep -q needs_recovery || fail "no journal to replay"
cp --sparse=always "$disk" "$T/pending.img"

# sums of what must not change: partition 1 (and the table), and the
# bytes after partition 2 (the backup GPT)
outside() {	# RAW
	{ head -c "$off" "$1"; tail -c +$((end + 1)) "$1"; } | sha256sum | cut -d' ' -f1
}
want_outside=$(outside "$disk")

# nothing of --fsck's stays: loop device, mount, server, temp folder
nothing_left() {	# IMG WHAT
	[ -z "$(losetup -n -j "$1")" ] || fail "$2: a loop device over $1 left: $(losetup -j "$1")"
	! grep -q "$T/tmp" /proc/mounts || fail "$2: a FUSE mount left: $(grep "$T/tmp" /proc/mounts)"
	# ours only: qemu-nbd runs in the image's folder, on "./NAME"
	local p
	for p in $(pgrep -x qemu-nbd); do
		[ "$(readlink "/proc/$p/cwd" 2>/dev/null)" != "$(dirname "$1")" ] ||
			fail "$2: qemu-nbd left: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
	done
	! pgrep -a -x nbdfuse | grep -q "$T/tmp" || fail "$2: nbdfuse left"
	[ -z "$(ls -A "$T/tmp")" ] || fail "$2: left in TMPDIR: $(ls -A "$T/tmp")"
}

# the partition's files and the replayed block, on a raw copy
content_ok() {	# RAW WHAT
	local f="$1?offset=$off" i
	e2fsck -fn "$f" >"$T/fsck.out" 2>&1 || { cat "$T/fsck.out"; fail "$2: e2fsck -fn after"; }
	debugfs -R "cat jf" "$f" 2>/dev/null | cmp -s - "$T/y" ||
		fail "$2: jf does not hold the journaled block (no replay)"
	for ((i = 1; i < 40; i += 2)); do
		debugfs -R "cat f$i" "$f" 2>/dev/null | cmp -s - "$T/blob$i" ||
			fail "$2: f$i changed"
	done
	assert_eq "$(outside "$1")" "$want_outside" "$2: bytes outside partition 2"
}

# fix IMG ARGS: the refusal (14) and its fix, from --json
fix_of() {
	RC=0
	(cd "$T" && "$E2TRIM" --json -n "$@") >"$T/out" 2>"$T/err" || RC=$?
	OUT=$T/out
	[ "$RC" = 14 ] || { cat "$T/err"; fail "journal to replay, $*: exit $RC, not 14"; }
	FIX=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["targets"][0]["fix"] or "")' "$OUT")
}

# run_fix WHAT FILE WANT ARGS...: the --json fix for ARGS is WANT; run as
# printed with sh -c, e2fsck replays the journal and FILE gets smaller
run_fix() {
	local what=$1 file=$2 want=$3 before
	shift 3
	fix_of "$@"
	echo "$FIX" >"$T/fix"
	assert_eq "$FIX" "$want" "$what: the printed fix"
	before=$(alloc_bytes "$file")
	(cd "$T" && sh -c "$(cat "$T/fix")") >"$T/out" 2>"$T/err" ||
		{ cat "$T/err"; fail "$what: '$(cat "$T/fix")' failed"; }
	assert_grep "recovering journal" "$T/err" "$what: e2fsck replayed"
	[ "$(alloc_bytes "$file")" -lt "$before" ] || fail "$what: nothing trimmed"
}

# 1. raw disk image, -p 2: the fix as printed
run_fix "-p 2" "$disk" "e2trim --fsck -p 2 disk.img" -p 2 disk.img
content_ok "$disk" "-p 2"
nothing_left "$disk" "-p 2"
note "-p 2: fix 'e2trim --fsck -p 2 disk.img' replays, trims partition 2 only"

# 2. qcow2 of the same disk: through qemu-nbd, and only the qcow2 changes
q="$T/disk.qcow2"
qemu-img convert -O qcow2 "$T/pending.img" "$q" || fail "qemu-img convert"
run_fix qcow2 "$q" "e2trim --fsck -p 2 disk.qcow2" -p 2 disk.qcow2
nothing_left "$q" "qcow2"
qemu-img check "$q" >/dev/null 2>&1 || fail "qcow2: qemu-img check (or its lock still held)"
qemu-img convert -O raw "$q" "$T/back.img" || fail "qemu-img convert back"
content_ok "$T/back.img" "qcow2"
note "qcow2 -p 2: replayed through nbdfuse, trimmed; nothing left"
# the whole disk, no -p: refused as a raw disk is (27), e2fsck not run
run_e2trim --fsck "$q"
assert_rc 27 "qcow2 whole disk, --fsck"
! grep -q "e2fsck" "$ERR" || { cat "$ERR"; fail "qcow2 whole disk: e2fsck ran"; }
nothing_left "$q" "qcow2 whole disk"

# a whole qcow2, not cleanly unmounted: --fsck=force, no loop device
mkfs "$T/one.img" 32M -t ext4
debugfs -w -R "ssv state 0" "$T/one.img" >/dev/null 2>&1 || fail "ssv state"
qemu-img convert -O qcow2 "$T/one.img" "$T/one.qcow2" || fail "convert one"
run_e2trim -n "$T/one.qcow2"
assert_rc 13 "one.qcow2 not clean"
run_e2trim --fsck=force -v "$T/one.qcow2"
assert_rc 0 "one.qcow2 --fsck=force"
assert_grep "running e2fsck -f -p $T/tmp/e2trim-fsck\..*/disk$" "$ERR" "one.qcow2: e2fsck ran on its content"
nothing_left "$T/one.qcow2" "one.qcow2"
run_e2trim -n "$T/one.qcow2"
assert_rc 0 "one.qcow2 after --fsck=force: clean"
note "whole qcow2, not clean: --fsck=force checks it through nbdfuse"

# the loop device e2fsck checks through is partition 2's bytes only:
# read while e2fsck runs (pause point fsck@start), its offset and its
# size limit are the table entry's (no limit: e2fsck could write past
# the partition into the backup GPT)
cp --sparse=always "$T/pending.img" "$disk"
PAUSE_STAGE=fsck@start pause_e2trim --fsck -p 2 "$disk"
read -r lo lo_off lo_size <<<"$(losetup -n -O NAME,OFFSET,SIZELIMIT -j "$disk")"
[ -n "$lo" ] || { resume_e2trim; fail "no loop device over the image while e2fsck runs"; }
sys_size=$(cat "/sys/block/${lo#/dev/}/loop/sizelimit")
resume_e2trim
assert_rc 0 "--fsck -p 2, held while e2fsck ran"
assert_eq "$lo_off" "$off" "e2fsck's loop device: offset"
assert_eq "$lo_size" $((end - off)) "e2fsck's loop device: size limit"
assert_eq "$sys_size" $((end - off)) "e2fsck's loop device: size limit in sysfs"
nothing_left "$disk" "-p 2, held"
note "e2fsck's loop device: offset $off, size limit $((end - off)) (partition 2's entry)"

# 3. a stop while e2fsck runs: e2trim waits for it, then releases all
stop_during_fsck() {	# SIG WANT_RC IMG ARGS...
	local sig=$1 want=$2 img=$3
	shift 3
	PAUSE_STAGE=fsck@start pause_e2trim "$@"
	kill -s "$sig" "$(cat "$PAUSE.pid")" || fail "$sig: e2trim is gone while e2fsck runs"
	resume_e2trim
	assert_eq "$RC" "$want" "$sig during e2fsck ($*): exit"
	nothing_left "$img" "$sig during e2fsck ($*)"
}
for sig in INT TERM HUP PIPE; do
	want=130
	[ "$sig" != PIPE ] || want=1
	cp --sparse=always "$T/pending.img" "$disk"
	stop_during_fsck "$sig" "$want" "$disk" --fsck -p 2 "$disk"
	assert_eq "$(outside "$disk")" "$want_outside" "$sig: bytes outside partition 2"
	rm -f "$q"
	qemu-img convert -O qcow2 "$T/pending.img" "$q" || fail "qemu-img convert"
	stop_during_fsck "$sig" "$want" "$q" --fsck -p 2 "$q"
	qemu-img check "$q" >/dev/null 2>&1 || fail "$sig: qcow2 lock still held"
done
note "INT, TERM, HUP (130) and PIPE (1) during e2fsck: no loop, mount, server or temp folder left"

# 4. a stop while a VM image's mount comes up (pause point
# fsck-mount@start: nbdfuse serves, e2fsck not started): e2fsck never
# starts (E2FSCK names a shim that records each call), nothing is left
printf '#!/bin/sh\necho "$*" >>"%s"\nexec e2fsck "$@"\n' "$T/e2fsck.calls" >"$T/bin/e2fsck-rec"
chmod +x "$T/bin/e2fsck-rec"
rm -f "$q" "$T/e2fsck.calls"
qemu-img convert -O qcow2 "$T/pending.img" "$q" || fail "qemu-img convert"
E2FSCK=$T/bin/e2fsck-rec PAUSE_STAGE=fsck-mount@start pause_e2trim --fsck -p 2 "$q"
kill -s TERM "$(cat "$PAUSE.pid")" || fail "TERM: e2trim is gone while the mount comes up"
resume_e2trim
assert_eq "$RC" 130 "TERM while the mount came up: exit"
[ ! -e "$T/e2fsck.calls" ] || fail "TERM while the mount came up: e2fsck ran anyway: $(cat "$T/e2fsck.calls")"
nothing_left "$q" "TERM while the mount came up"
qemu-img check "$q" >/dev/null 2>&1 || fail "TERM while the mount came up: qcow2 lock still held"
# the shim itself records: the same run unstopped calls it once
E2FSCK=$T/bin/e2fsck-rec run_e2trim --fsck -p 2 "$q"
assert_rc 0 "--fsck -p 2 through the shim"
assert_eq "$(wc -l <"$T/e2fsck.calls")" 1 "e2fsck calls of an unstopped run"
note "TERM while nbdfuse's mount came up: exit 130, e2fsck never started, nothing left"
finish
