# shellcheck shell=bash disable=SC2154  # "here" is set by the caller
# SPDX-License-Identifier: GPL-2.0-or-later
# images/common.sh - what mkimages.sh and mkverify.sh share: the fixed
# environment that makes mke2fs and debugfs reproducible, a scratch
# directory $W, and the helpers that make and edit a filesystem.  Source
# it after setting "here" to the images/ directory.
set -euo pipefail
export LC_ALL=C TZ=UTC
export PATH="$PATH:/sbin:/usr/sbin"
export E2FSPROGS_FAKE_TIME=1700000000
export SOURCE_DATE_EPOCH=1700000000
export MKE2FS_CONFIG=$here/../tests/mke2fs.conf
UUID=5b3c4e0a-6f1d-4f0e-9a51-3c2d7e8f9a10

W=$(mktemp -d "/tmp/${0##*/}.XXXXXX")
trap 'rm -rf "$W"' EXIT

die() { echo "${0##*/}: $*" >&2; exit 1; }

# mk IMG SIZE [mke2fs options...]: a fresh filesystem filling the file.
# $EOPTS adds to -E (mke2fs keeps only the last -E), $BLOCKS sets the
# block count when the filesystem must be smaller than the file.
mk() {
	local img=$1 size=$2; shift 2
	rm -f "$img"; truncate -s "$size" "$img"
	mke2fs -q -F -U "$UUID" \
		-E "hash_seed=$UUID,nodiscard,lazy_itable_init=0,lazy_journal_init=0${EOPTS:+,$EOPTS}" \
		"$@" "$img" ${BLOCKS:+"$BLOCKS"} >/dev/null || die "mke2fs $* failed"
}

# dfs IMG COMMAND...: debugfs -w, one command per argument; any error fails.
dfs() {
	local img=$1; shift
	printf '%s\n' "$@" >"$W/dfs.cmds"
	debugfs_script "$img" "$W/dfs.cmds"
}
# debugfs_script IMG FILE: debugfs -w -f FILE; any error fails.
debugfs_script() {
	debugfs -w -f "$2" "$1" >"$W/dfs.out" 2>"$W/dfs.err" || die "debugfs failed on $1"
	if grep -v '^debugfs [0-9.]* (' "$W/dfs.err" | grep -q .; then
		cat "$W/dfs.err" >&2
		die "debugfs reported errors on $1"
	fi
}
