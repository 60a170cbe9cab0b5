#!/bin/bash
# tests/bench_env.sh - what every bench script (bench.sh, bench_vm.sh,
# bench_ceph.sh) starts with: where it is ($here), the shared bench
# scripts ($shared: mkfrag.sh, anchors.sh; BENCH_SHARED), the
# e2trim measured as an absolute path ($E2TRIM), the folder of the images
# ($dir: BENCH_DIR) and the aged image's size and name ($AGED_MB, $AGED:
# BENCH_AGED_MB, 1024 unless only the output is being tried).  The aged
# images are tests/mkaged.sh's, the same bytes for the same arguments;
# their names carry $AGED_TAG, the start of that script's sha256, so that
# an image an older generator left in $dir is never taken for its own.
# shellcheck disable=SC2034  # set for the scripts that source this
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shared=$(cd "${BENCH_SHARED:-$here/../../shared/bench}" 2>/dev/null && pwd) || shared=
: "${E2TRIM:=$here/../build/e2trim}"
E2TRIM=$(cd "$(dirname "$E2TRIM")" && pwd)/$(basename "$E2TRIM")
dir=${BENCH_DIR:-/var/tmp/e2trim-bench}
AGED_MB=${BENCH_AGED_MB:-1024}
AGED_TAG=$(sha256sum "$here/mkaged.sh" | cut -c1-8)
AGED=aged$((AGED_MB))m-$AGED_TAG.img
[ "$AGED_MB" != 1024 ] || AGED=aged1g-$AGED_TAG.img
# mkaged IMG SIZE_MB SEED: the aged image, made unless it is there
mkaged() { [ -f "$1" ] || bash "$here/mkaged.sh" "$@" >/dev/null; }
