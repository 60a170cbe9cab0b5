#!/bin/bash
# Never trust a bitmap blindly.  Every fixture of images/mkverify.sh is a
# filesystem damaged in one way: a block that a file, an extent tree, an
# indirect block, an xattr block, the journal, an inode table or a backup
# superblock uses is marked free (also by BLOCK_UNINIT, also on bigalloc),
# or an inode cannot be followed.  e2trim refuses each with its exit code
# (19 or 16) and names the first such block and its owner, in a dry run
# and in a real one, on the image file and through a loop device, and not
# one byte of the image changes.  --no-verify trusts the bitmap: the dry
# run then plans exactly the bitmap's free space (dumpe2fs, trimmed inward
# to the host's block as --list prints it), and that free space holds the
# very block the refusal named.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

IMAGES=$(cd "$(dirname "$0")/../../images" && pwd)
disc_requests() { awk '{print $12}' "/sys/block/$(basename "$1")/stat"; }

# verify_fixture NAME: images/verify/NAME.img.xz, checked, in $T
verify_fixture() {
	local img=$T/$1.img want
	xz -dc "$IMAGES/verify/$1.img.xz" >"$img" || fail "xz -d $1"
	want=$(awk -v n="$1.img" '$2 == n {print $1}' "$IMAGES/verify/SHA256SUMS")
	[ -n "$want" ] || fail "$1 is not in images/verify/SHA256SUMS"
	[ "$(sha_of "$img")" = "$want" ] || fail "$1.img does not match SHA256SUMS"
	echo "$img"
}

# refused NAME CODE MESSAGE WHAT [e2trim args...]: refused, nothing changed
refused() {
	local name=$1 code=$2 msg=$3 what=$4; shift 4
	local before
	before=$(sha_of "$img")
	run_e2trim "$@"
	assert_rc "$code" "$name ($what)"
	assert_grep "$msg" "$ERR" "$name ($what): names the owner"
	assert_grep "run e2fsck -f first" "$ERR" "$name ($what): names the fix"
	[ ! -s "$OUT" ] || { cat "$OUT" >&2; fail "$name ($what): printed a plan"; }
	assert_eq "$(sha_of "$img")" "$before" "$name ($what): image changed"
}

# refused_on_loop NAME CODE MESSAGE: the same through a loop device over
# $img: refused, no discard request, nothing changed
refused_on_loop() {
	local name=$1 code=$2 msg=$3 dev d0 before
	if [ "$(id -u)" != 0 ] || ! losetup -f >/dev/null 2>&1; then
		left_out "$name on a loop device (needs root and a loop device)"
		return
	fi
	dev=$(loop_attach "$img")
	d0=$(disc_requests "$dev")
	before=$(sha_of "$img")
	run_e2trim -v "$dev"
	assert_rc "$code" "$name (loop device)"
	assert_grep "$msg" "$ERR" "$name (loop device): names the owner"
	assert_eq "$(disc_requests "$dev")" "$d0" "$name: discards issued on the loop device"
	losetup -d "$dev"; LOOPS=()
	assert_eq "$(sha_of "$img")" "$before" "$name (loop device): image changed"
}

grep -q -- "--no-verify" <("$E2TRIM" --help) || fail "--help does not list --no-verify"

n=0
while read -r name code msg; do
	img=$(verify_fixture "$name")
	e2fsck -fn "$img" >/dev/null 2>&1 && fail "$name: e2fsck -fn finds nothing wrong"

	refused "$name" "$code" "$msg" "dry run" -n -v --list "$img"
	refused "$name" "$code" "$msg" "trim" -v "$img"
	# under a checker (E2E_SAMPLE) the range and the loop device, the same
	# paths for every fixture, with every fourth one; the plain pass: all
	if in_sample $((n + 1)) 4 1; then
		refused "$name" "$code" "$msg" "dry run, range" -n -o 0 -l 4096 "$img"
		refused_on_loop "$name" "$code" "$msg"
	fi

	# --no-verify: the bitmap is believed, so the plan has the block
	run_e2trim -n --no-verify --list "$img"
	assert_rc 0 "$name: --no-verify dry run"
	if [ "$code" = 19 ]; then
		run_e2trim -n "$img"
		blk=$(sed -n 's/.*(block \([0-9]*\):.*/\1/p; s/.*blocks, first \([0-9]*\):.*/\1/p' "$ERR")
		[ -n "$blk" ] || fail "$name: no block number in the refusal"
		run_e2trim -n --no-verify --list "$img"
		list_oracle "$img" "$img" >"$T/want"
		cmp -s "$OUT" "$T/want" || { diff "$OUT" "$T/want" | head >&2;
			fail "$name: --no-verify plans other than the bitmap's free space"; }
		bs=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Block size:/ {print $3}')
		oracle_extents "$img" | awk -v b=$((blk * bs)) -v bs="$bs" '$1 <= b && b + bs <= $1 + $2 {f = 1} END {exit !f}' ||
			fail "$name: the bitmap does not mark block $blk free"
		note "$name: exit $code, names block $blk ($msg); --no-verify would trim it"
	else
		note "$name: exit $code ($msg)"
	fi
	n=$((n + 1))
done < <(bash "$IMAGES/mkverify.sh" --list)
[ "$n" -ge 20 ] || fail "only $n verify fixtures"
finish
