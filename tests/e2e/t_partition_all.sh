#!/bin/bash
# -p all on whole-disk images, MBR and GPT: two ext4 partitions, a FAT
# one and a gap.  Both ext4 partitions are trimmed, one result each; the
# table, the FAT partition, the gap and every used block stay byte for
# byte.  Without -p the image is refused (27) with its ext partitions
# named; "disk.img?offset=N" names one filesystem.  Run as an ordinary
# user on an image that user owns, as image pipelines do.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
here=$(dirname "$0")/..
command -v mkfs.fat >/dev/null || skip "mkfs.fat not installed (make deps installs dosfstools)"

# as_user CMD...: as nobody when root (the image is nobody's), else as is
as_user() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	else
		"$@"
	fi
}

one_table() {
	local label=$1 img="$T/data/$1.img" o1=$((2048 * 512)) o3=$((90112 * 512)) hbs want got
	truncate -s 160M "$img"
	# 1: ext4 20 MiB; 2: FAT 16 MiB; a 8 MiB gap; 3: ext4 64 MiB
	printf 'label: %s\nstart=2048, size=40960, type=L\nstart=43008, size=32768, type=U\nstart=90112, size=131072, type=L\n' \
		"$label" | sfdisk -q "$img" || fail "$label: sfdisk"
	rm -f "$T/fat.img"
	mkfs.fat -C "$T/fat.img" 16384 >/dev/null || fail "mkfs.fat"
	dd if="$T/fat.img" of="$img" bs=512 seek=43008 conv=notrunc status=none
	head -c $((8 << 20)) /dev/zero | tr '\0' '\167' |
		dd of="$img" bs=512 seek=75776 conv=notrunc status=none
	mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$o1 "$img" 20M ||
		fail "mke2fs 1"
	mke2fs -q -F -t ext4 -E nodiscard,offset=$o3 "$img" 64M || fail "mke2fs 3"
	age_part "$img" $o1 30 7 41
	age_part "$img" $o3 30 7 41

	# the plan from dumpe2fs: both partitions, in bytes of the image
	hbs=$(stat -f -c %S "$img")
	{ oracle_extents "$img?offset=$o1" | aligned_extents "$hbs" $o1
	  oracle_extents "$img?offset=$o3" | aligned_extents "$hbs" $o3; } >"$T/plan"
	want=$(awk '{s += $2} END {print s + 0}' "$T/plan")
	[ "$want" -gt 0 ] || fail "$label: nothing to trim in the fixture"

	run_e2trim -n "$img"
	assert_rc 27 "$label: a whole-disk image without -p"
	assert_grep "its ext partitions: 1 (ext4), 3 (ext4)); give -p all" "$ERR" "$label: refusal names the partitions"
	run_e2trim -n --fsck "$img"
	assert_rc 27 "$label: --fsck on a whole-disk image, before e2fsck runs"

	run_e2trim -n --list -p all "$img"
	assert_rc 0 "$label: -p all --list"
	# several targets: each range names its partition first (lsblk -r's \x20)
	awk '{print $2, $3}' "$OUT" >"$T/ranges"
	cmp -s "$T/ranges" "$T/plan" || { diff "$T/ranges" "$T/plan" | head; fail "$label: plan differs from dumpe2fs"; }
	assert_eq "$(awk '{print $1}' "$OUT" | uniq | tr '\n' ' ')" \
		"$img,\\x20partition\\x201 $img,\\x20partition\\x203 " "$label: each range names its partition"

	run_e2trim -n --json -p all "$img"
	assert_rc 0 "$label: -p all --json"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
got = [(t["target"], t["partition"], t["status"], t["filesystem"]["offset"]) for t in d["targets"]]
want = [(sys.argv[2], 1, "dry-run", int(sys.argv[3])), (sys.argv[2], 3, "dry-run", int(sys.argv[4]))]
assert got == want, got
assert sum(t["result"]["bytes_trimmed"] for t in d["targets"]) == int(sys.argv[5])' \
		"$OUT" "$img" $o1 $o3 "$want" || fail "$label: JSON entries"

	run_e2trim -n -v "$img?offset=$o3"
	assert_rc 0 "$label: ?offset="
	got=$(sed -n 's/.*(\([0-9]*\) bytes) trimmed.*/\1/p' "$OUT")
	assert_eq "$got" "$(oracle_extents "$img?offset=$o3" | aligned_extents "$hbs" $o3 |
		awk '{s += $2} END {print s + 0}')" "$label: ?offset= trims partition 3"
	# -p names filesystems by the table, ?offset= by bytes: not both, so
	# that one filesystem cannot be named twice in two ways
	for p in 1 all; do
		run_e2trim -n -p "$p" "$img" "$img?offset=$o1"
		assert_rc 64 "$label: -p $p beside ?offset="
		assert_grep "offset=$o1: ?offset= and -p exclude each other" "$ERR" \
			"$label: -p $p beside ?offset="
	done

	# the real thing, as the image's owner, not root
	cp --sparse=always "$img" "$T/before.img"
	alloc0=$(alloc_bytes "$img")
	chown 65534:65534 "$img" 2>/dev/null || true
	RC=0
	as_user "$E2TRIM" -v -p all "$img" >"$T/out" 2>"$T/err" || RC=$?
	ERR="$T/err"
	assert_rc 0 "$label: -p all as an ordinary user"
	assert_grep "$img, partition 1: .* trimmed" "$T/out" "$label: partition 1 reported"
	assert_grep "$img, partition 3: .* trimmed" "$T/out" "$label: partition 3 reported"
	got=$(sed -n 's/.*(\([0-9]*\) bytes) trimmed.*/\1/p' "$T/out" | awk '{s += $1} END {print s + 0}')
	assert_eq "$got" "$want" "$label: bytes reported"
	assert_eq "$((alloc0 - $(alloc_bytes "$img")))" "$want" "$label: drop of allocated size"
	python3 "$here/same_outside.py" "$T/before.img" "$img" "$T/plan" "$hbs" >/dev/null ||
		fail "$label: bytes outside the plan changed (table, FAT, gap or used blocks)"
	python3 "$here/holes.py" "$img" "$T/plan" "$hbs" >/dev/null || fail "$label: plan not punched"
	e2fsck -fn "$img?offset=$o1" >/dev/null 2>&1 || fail "$label: e2fsck partition 1"
	e2fsck -fn "$img?offset=$o3" >/dev/null 2>&1 || fail "$label: e2fsck partition 3"
	note "$label: $want bytes trimmed in partitions 1 and 3, the rest identical"

	# the same spellings on a loop device over the whole image
	if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
		dev=$(loop_attach "$img")
		run_e2trim -n "$dev"
		assert_rc 27 "$label: a whole-disk loop device without -p"
		run_e2trim -n --list "$dev?offset=$o3"
		assert_rc 0 "$label: $dev?offset="
		oracle_extents "$img?offset=$o3" | aligned_extents "$(granularity "$dev")" $o3 >"$T/plan.dev"
		cmp -s "$OUT" "$T/plan.dev" || { diff "$OUT" "$T/plan.dev" | head; fail "$label: $dev?offset= plan"; }
		losetup -d "$dev"
	elif [ "${CI:-}" = true ]; then
		fail "needs root and loop devices under CI"
	fi
}

mkdir -p "$T/data"
chmod 755 "$T"
chown 65534:65534 "$T/data" 2>/dev/null || true
one_table dos
one_table gpt

# no ext partition at all: its own refusal, 11
img="$T/data/fat-only.img"
truncate -s 40M "$img"
printf 'label: dos\nstart=2048, size=32768, type=c\n' | sfdisk -q "$img" || fail "sfdisk"
run_e2trim -n -p all "$img"
assert_rc 11 "-p all without ext partitions"
assert_grep "has no ext2/ext3/ext4 partition" "$ERR" "message"
exit 0
