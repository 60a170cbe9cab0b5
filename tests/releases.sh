#!/bin/bash
# tests/releases.sh [RELEASE...] - e2trim built and tested inside other
# Debian releases (make check-releases; default: trixie bullseye).
#
# For each release: a root made by mmdebstrap from the Debian mirror this
# machine's apt uses (read from /etc/apt/sources.list* here, at run time),
# with that release's build dependencies; in it, from a copy of the
# sources: make (warnings are errors: -Werror), every unit suite, a smoke
# (make demo's image: a dry run, the trim, e2fsck -fn clean), `make deps`
# asked of that release's apt (every package of DEB_PKGS must resolve:
# apt-get --simulate), and on trixie `make deb` (lintian and blhc silent).
#
# Debian 11 (bullseye, libext2fs 1.46.2, libnbd 1.6, liburing 0.7) stands
# for the 1.46 API of Ubuntu 22.04 and RHEL 9; Debian 13 (trixie, 1.47.2,
# libnbd 1.22, liburing 2.9, gcc 14) for the newest.
#
# The roots are cached in E2TRIM_ROOTS (/var/cache/e2trim-roots), one
# folder per release, mirror and package list: a second run only builds.
# No mirror or no network: exit 77, a skip (a failure under CI=true, as
# for every suite).  One line per release and step, with its seconds, and
# a table at the end.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
ROOTS=${E2TRIM_ROOTS:-/var/cache/e2trim-roots}
releases=("$@")
[ ${#releases[@]} -gt 0 ] || releases=(trixie bullseye)

skip() {
	echo "check-releases: SKIP: $*" >&2
	[ "${CI:-}" = true ] && { echo "check-releases: a skip fails under CI=true" >&2; exit 1; }
	exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (mmdebstrap, chroot)"
command -v mmdebstrap >/dev/null || skip "mmdebstrap not installed (make deps-releases)"

# The Debian archive this machine's apt uses: the URI of an entry whose
# suites hold the machine's own codename (not -security, not a third
# party's), from a one-line or a deb822 source.
own=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)
mirror=$(python3 - "$own" /etc/apt/sources.list /etc/apt/sources.list.d/* <<'PY'
import re, sys
own = sys.argv[1]
for path in sys.argv[2:]:
    try:
        text = open(path).read()
    except OSError:
        continue
    if path.endswith(".sources"):
        for stanza in re.split(r"\n\s*\n", text):
            f = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", stanza, re.M))
            if "deb" in f.get("Types", "").split() and \
               own in f.get("Suites", "").split():
                print(f["URIs"].split()[0]); sys.exit()
    else:
        for line in text.splitlines():
            w = re.sub(r"\[[^]]*\]", "", line).split()
            if len(w) >= 3 and w[0] == "deb" and w[2] == own:
                print(w[1]); sys.exit()
PY
)
[ -n "$mirror" ] || skip "no Debian mirror for $own in /etc/apt/sources.list*"

# Build and test dependencies inside each root (no more: the roots stay
# small), and the package tools where make deb runs.  DEB_PKGS (make
# deps) is only asked of apt, never installed.
BUILD_PKGS="gcc make pkg-config libext2fs-dev comerr-dev libcmocka-dev
	liburing-dev libblkid-dev libnbd-dev nbdkit e2fsprogs util-linux fdisk
	python3 ca-certificates"
DEB_BUILD_PKGS="build-essential dpkg-dev debhelper lintian blhc"
DEB_PKGS=$(make -s -C "$src" --no-print-directory print-deb-pkgs)

# root RELEASE: the cached root's folder, made when missing
root() {
	local rel=$1 pkgs key dir part
	pkgs=$BUILD_PKGS
	[ "$rel" != trixie ] || pkgs="$pkgs $DEB_BUILD_PKGS"
	pkgs=$(echo "$pkgs" | tr -s ' \t\n' '\n' | sed '/^$/d' | sort -u | paste -sd, -)
	key=$(printf '%s %s %s\n' "$rel" "$mirror" "$pkgs" | sha256sum | cut -c1-12)
	dir=$ROOTS/$rel-$key
	if [ -f "$dir/.e2trim-root-ok" ]; then
		echo "$dir"; return 0
	fi
	mkdir -p "$ROOTS"
	part=$ROOTS/partial-$rel-$key
	rm -rf "$part"
	# a root of this release with another package list: the packages
	# added to it, not a new root (minutes less)
	for old in "$ROOTS/$rel"-*; do
		[ -f "$old/.e2trim-root-ok" ] || continue
		mv "$old" "$part" && rm -f "$part/.e2trim-root-ok"
		# shellcheck disable=SC2086 # one name a word
		if in_root "$part" "apt-get update -q && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -q --no-install-recommends $(echo "$pkgs" | tr , ' ')" \
			>"$LOGS/$rel.mmdebstrap" 2>&1; then
			mv "$part" "$dir" && touch "$dir/.e2trim-root-ok" && echo "$dir"
			return 0
		fi
		tail -20 "$LOGS/$rel.mmdebstrap" >&2
		rm -rf "$part"
	done
	# apt's lists kept: make deps' packages are resolved in the root
	# without the network
	mmdebstrap --variant=apt --include="$pkgs" --skip=cleanup/apt/lists \
		"$rel" "$part" "deb $mirror $rel main" >"$LOGS/$rel.mmdebstrap" 2>&1 ||
		{ tail -20 "$LOGS/$rel.mmdebstrap" >&2; rm -rf "$part"; return 1; }
	# older roots of this release (another package list) go
	rm -rf "${ROOTS:?}/$rel"-*
	mv "$part" "$dir" && touch "$dir/.e2trim-root-ok" && echo "$dir"
}

# in_root DIR SCRIPT: SCRIPT run by bash in the root, /proc and /dev
# mounted in a mount namespace of its own (gone when it ends).  /tmp is
# the root's own, on the disk as the host's is (tmpfs reports fallocated
# blocks as holes: test_handle's image would look sparse)
in_root() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	unshare --mount --propagation private -- bash -c '
		mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" &&
		chroot "$1" /bin/bash -c "$2"' \
		in_root "$1" "$2"
}

LOGS=$(mktemp -d /tmp/e2trim-releases.XXXXXX)
declare -A SECS=() RES=()
failed=0
step() {	# RELEASE STEP CMD...: one step, timed, logged
	local rel=$1 name=$2 s rc=0; shift 2
	s=$(date +%s)
	"$@" >"$LOGS/$rel.$name" 2>&1 || rc=$?
	SECS[$rel.$name]=$(($(date +%s) - s))
	if [ "$rc" = 0 ]; then RES[$rel.$name]=ok; else RES[$rel.$name]="FAIL($rc)"; failed=1; fi
	echo "$rel: $name ${RES[$rel.$name]} ${SECS[$rel.$name]} s"
	[ "$rc" = 0 ] || tail -15 "$LOGS/$rel.$name" | sed "s/^/$rel| /"
	[ "$rc" = 0 ]
}

# the sources as a fresh clone has them (git's files, or the tree)
copy_src() {	# DEST
	rm -rf "$1"; mkdir -p "$1"
	if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
		(cd "$src" && git ls-files -z --cached --others --exclude-standard |
			xargs -0 cp --parents -a -t "$1")
	else
		(cd "$src" && tar --exclude='./build*' -cf - .) | tar -C "$1" -xf -
	fi
}

# shellcheck disable=SC2016 # run by bash inside the root
SMOKE='set -e
cd /e2trim
export E2TRIM=$PWD/build/e2trim T=$(mktemp -d)
. tests/lib.sh
img=$T/sample.img
mkfs "$img" 512M -t ext4
age "$img" 42
before=$(alloc_bytes "$img")
"$E2TRIM" --dry-run --verbose "$img"
[ "$(alloc_bytes "$img")" = "$before" ] || { echo "the dry run changed the image"; exit 1; }
"$E2TRIM" --verbose "$img"
after=$(alloc_bytes "$img")
echo "allocated: $before -> $after bytes"
[ "$after" -lt "$before" ] || { echo "nothing trimmed"; exit 1; }
e2fsck -fn "$img"'

for rel in "${releases[@]}"; do
	t0=$(date +%s)
	s=$(date +%s)
	if ! dir=$(root "$rel"); then
		# no network (or no such release on the mirror)
		[ "${CI:-}" = true ] || { echo "$rel: SKIP: mmdebstrap $rel from $mirror failed"; RES[$rel.root]=skip; continue; }
		RES[$rel.root]=FAIL; failed=1; continue
	fi
	SECS[$rel.root]=$(($(date +%s) - s)); RES[$rel.root]=ok
	echo "$rel: root ok ${SECS[$rel.root]} s ($dir)"
	step "$rel" copy copy_src "$dir/e2trim" || continue
	step "$rel" build in_root "$dir" 'cd /e2trim && make -j2 CFLAGS="-O2 -g -Werror" all' &&
	step "$rel" unit in_root "$dir" 'cd /e2trim && make -j2 CFLAGS="-O2 -g -Werror" check-unit' &&
	step "$rel" smoke in_root "$dir" "$SMOKE"
	# make deps on that release: every package it would install exists
	step "$rel" deps in_root "$dir" "apt-get -s -q install $DEB_PKGS >/dev/null"
	if [ "$rel" = trixie ]; then
		step "$rel" deb in_root "$dir" 'cd /e2trim && rm -rf build && make deb DEB_TOOLS=mke2fs'
	fi
	rm -rf "${dir:?}/e2trim"
	SECS[$rel.total]=$(($(date +%s) - t0))
done

echo
printf '%-10s %10s %10s %10s %10s %10s %10s %8s\n' release root build unit smoke deps deb total
for rel in "${releases[@]}"; do
	line=$(printf '%-10s' "$rel")
	for s in root build unit smoke deps deb; do
		v=${RES[$rel.$s]:--}
		[ -z "${SECS[$rel.$s]:-}" ] || v="$v ${SECS[$rel.$s]}s"
		line="$line $(printf '%10s' "$v")"
	done
	echo "$line $(printf '%7s' "${SECS[$rel.total]:--}s")"
done
echo "logs: $LOGS"
[ "$failed" = 0 ] || exit 1
for rel in "${releases[@]}"; do [ "${RES[$rel.root]}" != skip ] || exit 77; done
rm -rf "$LOGS"
