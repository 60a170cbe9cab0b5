# shellcheck shell=bash disable=SC2034  # the lists are for the tests that source this
# tests/fixtures.sh - the fixture images of images/ for end-to-end tests
#
# Source it after tests/lib.sh.  The fixtures are made by
# images/mkimages.sh; images/README.md says what each one covers.  The
# lists below are what the tests expect of each; t_fixtures_complete.sh
# checks that every image in images/ is in exactly one of them.

IMAGES=$(cd "$(dirname "${BASH_SOURCE[0]}")/../images" && pwd)

# Clean, aged layouts: a dry run plans exactly dumpe2fs's free extents.
GOOD_FIXTURES=(
	ext2-1k ext2-2k ext3 ext4 ext4-noflex ext4-metabg ext4-bigalloc16k
	ext4-bigalloc64k ext4-uninit ext4-uninitbg ext4-sparse2 ext4-mmp
	ext4-tail
)
# Of those, the ones with flex_bg, where a free run may cross from one
# block group into the next (without flex_bg every group starts with its
# own bitmaps and inode table, so no run can).
CROSSING_FIXTURES=(
	ext4 ext4-metabg ext4-bigalloc16k ext4-bigalloc64k ext4-uninit
	ext4-uninitbg ext4-sparse2 ext4-mmp ext4-tail
)

# Refusals: name, exit code, --force overrides it (1) or not (0), and a
# pattern that the message must hold: the fix it names.
UNSAFE_FIXTURES=(
	"unsafe-journal-recover  14 1 run e2fsck first to replay it"
	"unsafe-error-fs         13 1 run e2fsck -f first"
	"unsafe-not-valid        13 1 run e2fsck -f first"
	"unsafe-orphan-inode     15 1 run e2fsck first"
	"unsafe-orphan-file      15 1 run e2fsck first"
	"unsafe-gd-csum          16 0 run e2fsck -f first"
	"unsafe-gd-csum-crc16    16 0 run e2fsck -f first"
	"unsafe-gd-uninit-flag   16 0 run e2fsck -f first"
	"unsafe-bitmap-csum      16 0 run e2fsck -f first"
	"unsafe-desc-layout      16 0 run e2fsck -f first"
	"unsafe-truncated        17 0 check that the image or device is complete"
	"unsafe-truncated-meta   17 0 check that the image or device is complete"
	"unsafe-mmp-seq          18 0 wait until it is released"
	"unsafe-mmp-fsck         18 0 tune2fs -f -E clear_mmp"
	"unsafe-feature-incompat 12 0 use fstrim"
	"unsafe-feature-rocompat 12 0 use fstrim"
	"unsafe-journal-dev      12 0 nothing to trim with e2trim"
	"notext-zeros            11 0 check the device or image name"
	"notext-random           11 0 check the device or image name"
	"notext-swap             11 0 check the device or image name"
	"notext-xfs              11 0 check the device or image name"
	"notext-tiny             11 0 check the device or image name"
)

# fixture_covers NAME IMG: the corner the fixture is for is really there
# (a feature, a cluster size, BLOCK_UNINIT groups...); fails if not.
fixture_covers() {
	local name=$1 img=$2 feat want=
	feat=" $(sb_field "$img" "Filesystem features") "
	case $name in
	ext2-1k) [ "$(sb_field "$img" "First block")" = 1 ] || fail "$name: first data block is not 1" ;;
	ext2-2k) [ "$(sb_field "$img" "Block size")" = 2048 ] || fail "$name: not 2 KiB blocks" ;;
	ext3) want="has_journal" ;;
	ext4) want="has_journal extent 64bit flex_bg metadata_csum" ;;
	ext4-noflex) want="extent metadata_csum"
		[[ $feat != *" flex_bg "* ]] || fail "$name: has flex_bg" ;;
	ext4-metabg) want="meta_bg"
		[[ $feat != *" resize_inode "* ]] || fail "$name: has resize_inode" ;;
	ext4-bigalloc16k) want="bigalloc"
		[ "$(sb_field "$img" "Cluster size")" = 16384 ] || fail "$name: clusters not 16 KiB" ;;
	ext4-bigalloc64k) want="bigalloc"
		[ "$(sb_field "$img" "Cluster size")" = 65536 ] || fail "$name: clusters not 64 KiB" ;;
	ext4-uninit|ext4-uninitbg)
		[ "$(dumpe2fs "$img" 2>/dev/null | grep -c '^Group .*BLOCK_UNINIT')" -ge 8 ] ||
			fail "$name: fewer than 8 BLOCK_UNINIT groups"
		[ "$name" = ext4-uninit ] && want=metadata_csum || want=uninit_bg ;;
	ext4-sparse2) want="sparse_super2" ;;
	ext4-mmp) want="mmp" ;;
	ext4-tail) [ "$(stat -c %s "$img")" -gt $(( $(sb_field "$img" "Block count") * $(sb_field "$img" "Block size") )) ] ||
		fail "$name: the image is not larger than the filesystem" ;;
	esac
	for f in $want; do
		[[ $feat == *" $f "* ]] || fail "$name: no $f in the features:$feat"
	done
}

# fixture NAME: decompress images/NAME.img.xz to $T/NAME.img (checked
# against images/SHA256SUMS) and print that path.
fixture() {
	local name=$1 img=$T/$1.img want got
	[ -f "$IMAGES/$name.img.xz" ] || fail "no fixture images/$name.img.xz"
	xz -dc "$IMAGES/$name.img.xz" >"$img" || fail "xz -d $name"
	want=$(awk -v n="$name.img" '$2 == n {print $1}' "$IMAGES/SHA256SUMS")
	got=$(sha_of "$img")
	[ -n "$want" ] || fail "$name is not in images/SHA256SUMS"
	[ "$got" = "$want" ] || fail "$name.img does not match images/SHA256SUMS"
	echo "$img"
}

# sb_field IMG "Field name": one value from dumpe2fs -h.
sb_field() {
	dumpe2fs -h "$1" 2>/dev/null | awk -F': *' -v f="$2" '$1 == f {print $2; exit}'
}

# metadata_overlap IMG LIST: print every extent of LIST ("start length"
# in bytes) that covers the boot block or superblock (first 2 KiB), or a
# block that dumpe2fs says holds a superblock, descriptors, reserved GDT,
# a bitmap or an inode table.  Prints nothing when the plan is clean.
metadata_overlap() {
	dumpe2fs "$1" 2>/dev/null | python3 -c '
import re, sys
bs = None; meta = [(0, 2048)]
for line in sys.stdin:
    m = re.match(r"Block size:\s+(\d+)", line)
    if m: bs = int(m.group(1)); continue
    for m in re.finditer(r"(?:superblock|descriptors|GDT blocks|bitmap|Inode table) at (\d+)(?:-(\d+))?", line):
        a = int(m.group(1)); b = int(m.group(2) or a)
        meta.append((a * bs, (b + 1) * bs))
meta.sort()
for l in open(sys.argv[1]):
    s, n = map(int, l.split()); e = s + n
    for a, b in meta:
        if a < e and s < b:
            print(f"extent {s}+{n} covers metadata bytes {a}-{b}"); break
' "$2"
}

# crossing_extents IMG LIST: how many extents of LIST run from one block
# group into the next.
crossing_extents() {
	local bpg fdb bs
	bs=$(sb_field "$1" "Block size")
	bpg=$(sb_field "$1" "Blocks per group")
	fdb=$(sb_field "$1" "First block")
	awk -v bs="$bs" -v bpg="$bpg" -v fdb="$fdb" '
	{ s = $1 / bs; e = ($1 + $2) / bs	# blocks [s, e)
	  g = int((s - fdb) / bpg); edge = fdb + (g + 1) * bpg
	  if (edge < e) n++ }
	END { print n + 0 }' "$2"
}
