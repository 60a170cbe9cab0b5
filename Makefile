# e2trim - discard the free space of an unmounted ext2/ext3/ext4 filesystem
#
#   make            build build/e2trim, build/libe2trim.a, build/libe2trim.so.1
#   make demo       install what is missing, build, trim a sample image
#   make check      install what is missing, build, run every test
#   make check-contract  the target contract (src/target/README.md) over every
#                   kind of target, RBD included (root; starts a Ceph cluster)
#   make check-layers  src/README.md's layer rule over the code
#   make check-conventions  src/README.md's return convention (errcode_t)
#   make check-names  no global symbol in a dependency's namespace (nbd_, rbd_...)
#   make check SANITIZE=1   the same under ASan + UBSan (the tests that
#                   run the build)
#   E2E_JOBS=N      end-to-end tests side by side (default: the cores)
#   make valgrind   end-to-end tests under valgrind
#   make bench      e2trim beside fstrim and e2fsck -E discard, --zero-fill
#                   beside zerofree (not a test; BENCH_ONLY=zero-fill)
#   make bench-ceph e2trim on an aged 1 GiB ext4 in Ceph RBD beside rbd
#                   sparsify and fstrim in a guest (root; tests/bench_ceph.sh)
#   make fuzz       libFuzzer over open + gates + plan, FUZZ_SECONDS (120) each;
#                   an input running over FUZZ_TIMEOUT (20) s fails it (kept)
#   make fuzz-partition  libFuzzer over the partition readers, as long
#   make mutate     random debugfs edits of clean fixtures against e2fsck -fy:
#                   MUTANTS (10000), SEED (1), JOBS (cores), E2TRIM (build/e2trim),
#                   unsafe cases saved in MUTATE_CASES (mutate-cases/)
#   make mutate-code  deliberate code mutants must fail the tests: MUTANTS_CODE=a,b,
#                   MUTATE_CODE_QUICK=1 (tagged tests only), MUTATE_CODE_JOBS
#   make mutate-code-ceph  the same for the mutants Ceph tests kill (root)
#   make install    PREFIX=/usr/local DESTDIR= LIBDIR=$(PREFIX)/lib
#   make E2TRIM_LINK=shared   the command links libe2trim.so.1, not .a
#   make deb        the Debian packages e2trim, libe2trim1, libe2trim-dev,
#                   in build/deb/ (dpkg-buildpackage; lintian, blhc)
#   make check-releases  build, unit suites, smoke (and make deb) inside
#                   Debian 13 and 11 roots (root; RELEASES="trixie bullseye")
#   make check-boot boot Debian's kernel under QEMU with each boot
#                   integration, installed from the package (root, ~10 min)
#
# CPPFLAGS, CFLAGS and LDFLAGS from the environment are honoured (the
# Debian build passes dpkg-buildflags' hardening flags through them).

CC ?= cc
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
# Debian's multiarch directory works too: LIBDIR=/usr/lib/x86_64-linux-gnu
# (debian/rules passes it).  e2trim.pc names its directories relative to
# ${prefix} when they lie under PREFIX, so pkg-config --define-prefix can
# move a default <prefix>/lib/pkgconfig install.
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DOCDIR ?= $(PREFIX)/share/doc/e2trim
UNITDIR ?= $(PREFIX)/lib/systemd/system
# initramfs-tools and dracut look only here, whatever PREFIX is
INITRAMFSDIR ?= /usr/share/initramfs-tools
DRACUTDIR ?= /usr/lib/dracut/modules.d

# Debian packages the build and the tests need; `make deps` installs them.
DEB_PKGS = libext2fs-dev comerr-dev libcmocka-dev liburing-dev libblkid-dev \
	   e2fsprogs pkg-config \
	   util-linux fdisk shellcheck groff-base busybox python3 xz-utils \
	   dosfstools zerofree qemu-utils gzip libnbd-dev nbdkit libnbd-bin fuse2fs \
	   abigail-tools \
	   xfsprogs systemd man-db clang
DEB_TOOLS = mke2fs debugfs dumpe2fs e2fsck losetup sfdisk shellcheck groff busybox \
	    python3 xz mkfs.fat zerofree qemu-img gzip qemu-nbd nbdkit nbdinfo \
	    mkfs.xfs systemd-analyze man setpriv clang abidiff abidw nbdfuse fuse2fs

ifeq ($(SANITIZE),1)
B := build-san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
	     -fno-omit-frame-pointer
else
B := build
SAN_FLAGS :=
endif

# Recursive (=) on purpose: evaluated when a recipe runs, after `deps`.
# liburing is optional: without it block devices get one ioctl at a time;
# before 2.2 its header does not name the discard command's fields
# (src/target/target_uring.c writes them by offset).
# libnbd's header is needed to build; the library itself is loaded with
# dlopen() only for VM images and NBD URIs (src/nbd/nbd_dl.h says why).
PKG_CFLAGS = $(shell pkg-config --cflags ext2fs com_err blkid libnbd) \
	     $(shell pkg-config --exists liburing && echo -DHAVE_LIBURING) \
	     $(shell pkg-config --atleast-version=2.2 liburing && echo -DHAVE_URING_CMD)
# dlopen() lives in libdl before glibc 2.34 (Debian 11: 2.31)
DL_LIBS := $(shell printf '\043include <dlfcn.h>\nint main(void) { return !dlsym(0, "x"); }\n' | \
	     $(CC) -x c -o /dev/null - 2>/dev/null || echo -ldl)
PKG_LIBS = $(shell pkg-config --libs ext2fs com_err blkid) \
	   $(shell pkg-config --libs liburing 2>/dev/null) $(DL_LIBS)
CMOCKA_LIBS = $(shell pkg-config --libs cmocka)
# what a static link against libe2trim.a needs besides (e2trim.pc)
PC_PRIVATE = ext2fs blkid$(shell pkg-config --exists liburing && echo ' liburing')
VERSION := $(shell sed -n 's/^\#define E2TRIM_VERSION "\(.*\)"/\1/p' src/e2trim.h)

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wformat=2 -Wno-format-nonliteral
# CPPFLAGS, CFLAGS and LDFLAGS from the environment are honoured (Debian's
# dpkg-buildflags hardening flags build warning-free).
CFLAGS ?= -O2 -g
ALL_CPPFLAGS = -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Isrc \
	       $(FAMILIES:%=-Isrc/%) -I$(B) $(CPPFLAGS)
ALL_CFLAGS = -std=gnu11 $(WARN) $(ALL_CPPFLAGS) $(CFLAGS) $(SAN_FLAGS) \
	     $(PKG_CFLAGS)
ALL_LDFLAGS = $(LDFLAGS) $(SAN_FLAGS)
DEPFLAGS = -MMD -MP

# The library: every stage of the engine, in the layers src/README.md
# lists, bottom first.  Its families keep their files in folders of their
# own; src/cli/ is the command, its first client, which sees the library
# through src/e2trim.h only.
FAMILIES := partition nbd target verify bitmaps host rbd checks open
LIB_SRCS := src/plan.c \
	    $(addprefix src/bitmaps/,free_runs.c bitmap.c) \
	    $(addprefix src/host/,sysfs.c run_cmd.c run_cmd_many.c \
		kept_buf.c io_readonly.c ramfs_io.c test_pause.c proc_fds.c) \
	    src/errors.c src/fix.c src/options.c \
	    $(addprefix src/partition/,partition_read.c partition_table.c \
		partition_gpt.c partition_mbr.c partition.c \
		partition_blkdev.c partition_sigs.c) \
	    $(addprefix src/nbd/,nbd_dl.c nbd_readahead.c nbd_io.c \
		nbd_server.c image_format.c image_qcow2.c) \
	    $(addprefix src/rbd/,rbd_dl_fn.c rbd_dl.c rbd_dl_lock.c \
		rbd_name.c rbd_cmd.c image_rbd.c rbd_io.c rbd_readahead.c) \
	    $(addprefix src/target/,target_core.c target_data_map.c \
		target_ring.c target_uring.c target_blkdev.c target_file.c \
		target_nbd.c target_rbd.c target_zero_write.c \
		target_zero_read.c target_zero.c target.c) \
	    $(addprefix src/bitmaps/,bitmap_read.c bitmap_stream.c) \
	    $(addprefix src/verify/,range_read.c itable_read.c verify_ref.c \
		verify_rules.c verify_dirs.c verify_counts.c verify_inodes.c \
		verify_imap.c verify.c) \
	    $(addprefix src/checks/,gates.c gates_super.c) \
	    $(addprefix src/open/,image_lock.c open_hold.c open_paths_scan.c \
		open_paths.c open_chain.c open_mmp.c open_data_file.c \
		open_witness.c open_nbd.c open_rbd.c open_table.c open_fs.c \
		open.c) \
	    $(addprefix src/checks/,journal_inode.c journal_check.c \
		check_desc.c check.c) \
	    src/apply_walk.c src/apply.c
ERR_C := $(B)/e2trim_err.c
ERR_H := $(B)/e2trim_err.h
LIB_OBJS := $(LIB_SRCS:src/%.c=$(B)/%.o) $(B)/e2trim_err.o
CLI_SRCS := src/cli/fsck.c src/cli/fsck_loop.c src/cli/fsck_vm.c src/cli/report.c src/cli/size.c src/cli/warn.c \
	    src/cli/output.c src/cli/json.c src/cli/jobs.c \
	    src/cli/job_list.c src/cli/jobs_parts.c src/cli/jobs_run.c \
	    src/cli/progress.c src/cli/histogram.c src/cli/test_hooks.c \
	    src/cli/outcome.c src/cli/lib_opts.c src/cli/usage.c
CLI_OBJS := $(CLI_SRCS:src/%.c=$(B)/%.o)
SO_VERSION := 1
LIB_A := $(B)/libe2trim.a
LIB_SO := $(B)/libe2trim.so.$(SO_VERSION)
BIN := $(B)/e2trim

UNIT_TESTS := test_plan test_size test_gates test_target test_fsck \
	      test_free_runs test_bitmap_stream test_errors test_uring \
	      test_partition test_itable_read test_json test_walk \
	      test_histogram test_zero_fill test_target_nbd \
	      test_check_desc test_image_format test_handle test_cancel \
	      test_apply_error test_api test_rbd_name test_rbd_readahead
UNIT_BINS := $(UNIT_TESTS:%=$(B)/tests/%)

.PHONY: all deps demo check check-contract check-contract-local build-all fuzz-build check-layers check-conventions check-names check-unit check-e2e check-abi abi-baseline \
	valgrind bench fuzz fuzz-partition \
	mutate mutate-code mutate-code-ceph \
	install uninstall clean images deb deps-deb deps-boot check-boot \
	deps-ceph check-ceph bench-ceph deps-releases check-releases print-deb-pkgs

all: $(BIN) $(LIB_A) $(LIB_SO)

# The error table: codes and messages from compile_et (comerr-dev).
$(ERR_C) $(ERR_H) &: src/e2trim_err.et | $(B)
	cd $(B) && compile_et $(CURDIR)/src/e2trim_err.et

# Every object is position-independent: the same ones go into both
# libraries.  Only the public e2trim_* functions (and the error table's
# initializer) are exported from either: libe2trim.map.
$(B)/%.o: src/%.c | $(ERR_H) $(B)/cli
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -fPIC -c -o $@ $<

$(B)/e2trim_err.o: $(ERR_C)
	$(CC) $(ALL_CFLAGS) -fPIC -c -o $@ $<

# The static library holds one object: every library object joined by a
# relocatable link (cc -r, which binds each internal call to our own
# definition; LDFLAGS too, so that blhc sees the hardening flags on
# every link), then every symbol but the exported ones made local, so
# that a program linked statically sees what libe2trim.so.1 shows and
# nothing else: its own lib_warn() or range_read() cannot clash with
# ours (tests/e2e/t_library_static.sh).  The list is libe2trim.map's
# `name;` lines, the one list of the ABI.
OBJCOPY ?= objcopy
LIB_SYMS := $(B)/libe2trim.syms
$(LIB_SYMS): src/libe2trim.map | $(B)
	sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);$$/\1/p' $< >$@.tmp
	test -s $@.tmp
	mv $@.tmp $@

$(B)/libe2trim.o: $(LIB_OBJS) $(LIB_SYMS)
	$(CC) $(LDFLAGS) -r -nostdlib -o $@.all $(LIB_OBJS)
	$(OBJCOPY) --keep-global-symbols=$(LIB_SYMS) $@.all $@
	rm -f $@.all

$(LIB_A): $(B)/libe2trim.o
	rm -f $@
	$(AR) rcs $@ $^

$(LIB_SO): $(LIB_OBJS) src/libe2trim.map
	$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,libe2trim.so.$(SO_VERSION) \
		-Wl,--version-script=src/libe2trim.map -Wl,--no-undefined \
		-o $@ $(LIB_OBJS) $(PKG_LIBS) -lpthread
	ln -sf libe2trim.so.$(SO_VERSION) $(B)/libe2trim.so

# The command links the static library: it runs wherever it is installed,
# with no ldconfig and no libe2trim.so.1 in the library path.
# E2TRIM_LINK=shared links libe2trim.so.1 instead, as the Debian package
# does (its libe2trim1 is where the dynamic linker looks).
E2TRIM_LINK ?= static
ifeq ($(E2TRIM_LINK),shared)
BIN_LIB := $(LIB_SO)
BIN_LINK = -L$(B) -le2trim
else
BIN_LIB := $(LIB_A)
BIN_LINK = $(LIB_A)
endif
# sysfs.c, a leaf that reads one sysfs line, serves the command too: the
# shared library does not export it.
$(BIN): $(B)/cli/e2trim.o $(CLI_OBJS) $(B)/host/sysfs.o $(BIN_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $(B)/cli/e2trim.o $(CLI_OBJS) $(B)/host/sysfs.o \
		$(BIN_LINK) $(PKG_LIBS) -lpthread

# White-box tests: every object, the command's too (not its main).
$(B)/tests/test_uring: tests/unit/test_uring.c $(LIB_OBJS) | $(B)/tests
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB_OBJS) \
		-Wl,--wrap=io_uring_submit -Wl,--wrap=__io_uring_get_cqe \
		$(CMOCKA_LIBS) $(PKG_LIBS) -lpthread

# fallocate() wrapped (fallocate64 with 64-bit offsets): a punch fails
$(B)/tests/test_apply_error: tests/unit/test_apply_error.c $(LIB_OBJS) | $(B)/tests
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB_OBJS) \
		-Wl,--wrap=fallocate64 $(CMOCKA_LIBS) $(PKG_LIBS) -lpthread

# librbd's reads wrapped over an image in memory
$(B)/tests/test_rbd_readahead: tests/unit/test_rbd_readahead.c $(LIB_OBJS) | $(B)/tests
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB_OBJS) \
		-Wl,--wrap=e2t_rbd_dl_io_aio_read -Wl,--wrap=e2t_rbd_dl_io_wait \
		$(CMOCKA_LIBS) $(PKG_LIBS) -lpthread

# the test calls libnbd itself, besides the table nbd_dl.c loads
$(B)/tests/test_target_nbd: tests/unit/test_target_nbd.c $(LIB_OBJS) | $(B)/tests
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB_OBJS) \
		$(CMOCKA_LIBS) $(PKG_LIBS) $(shell pkg-config --libs libnbd) -lpthread

$(B)/tests/%: tests/unit/%.c $(LIB_OBJS) $(CLI_OBJS) | $(B)/tests
	$(CC) $(ALL_CFLAGS) -Isrc/cli $(ALL_LDFLAGS) -o $@ $< $(LIB_OBJS) \
		$(CLI_OBJS) $(CMOCKA_LIBS) $(PKG_LIBS) -lpthread

$(B) $(B)/tests $(B)/cli:
	mkdir -p $@

-include $(wildcard $(B)/*.d $(B)/cli/*.d $(FAMILIES:%=$(B)/%/*.d))

# Install the Debian packages only when something is missing.
deps:
	@missing=; \
	pkg-config --exists ext2fs com_err blkid cmocka liburing libnbd 2>/dev/null || missing=1; \
	for t in $(DEB_TOOLS); do \
		PATH="$$PATH:/sbin:/usr/sbin" command -v $$t >/dev/null || missing=1; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "Installing build and test dependencies: $(DEB_PKGS)"; \
		if [ "$$(id -u)" != 0 ]; then \
			echo "make deps: run as root, or install: $(DEB_PKGS)" >&2; \
			exit 1; \
		fi; \
		apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(DEB_PKGS); \
	fi

demo: deps
	@$(MAKE) --no-print-directory all
	@E2TRIM=$(BIN) bash tests/demo.sh

# With SANITIZE=1 only what runs the sanitized build: the unit tests and
# the end-to-end tests that do not say "# e2e: no-sanitize" (run.sh).  The
# layer, convention and ABI checks read the sources and the plain build's
# library, the same either way.
ifeq ($(SANITIZE),1)
CHECK_PARTS := check-unit check-e2e
else
CHECK_PARTS := check-layers check-conventions check-names check-unit check-abi check-e2e \
	       check-contract-local
endif
check: deps
	@$(MAKE) --no-print-directory $(CHECK_PARTS)

# The target contract (src/target/README.md): every scenario of
# tests/contract/ over every kind of target.  `make check` runs the kinds
# that need no Ceph (check-contract-local), `make check-ceph` the
# RBD kinds inside its own cluster (tests/ceph/run.sh), so that CI starts
# one cluster; check-contract runs them all at once, starting one.
check-contract: deps-ceph $(BIN)
	@E2TRIM=$(CURDIR)/$(BIN) bash tests/contract/run.sh

check-contract-local: $(BIN)
	@E2TRIM=$(CURDIR)/$(BIN) CONTRACT_KINDS=local bash tests/contract/run.sh

# Everything make check runs, built (with -j2), and nothing run: .ci/run
# builds first, and builds the sanitized one while other phases run.
build-all: deps
	@$(MAKE) --no-print-directory all $(UNIT_BINS)

# src/README.md's layer rule: no include or call up a layer, no circle
check-layers:
	@python3 tests/layers.py

# names of our own: no global symbol of an object in a dependency's
# namespace (nbd_, rbd_, ...; src/README.md, "Folders and name prefixes")
check-names: all
	@bash tests/names.sh $(LIB_OBJS) $(B)/cli/e2trim.o $(CLI_OBJS)

# src/README.md's return convention: errcode_t inside the library
check-conventions:
	@python3 tests/conventions.py

# The ABI against the last release's (tests/abi/): make abi-baseline
# writes it, at a release only (see README, "ABI").
ABI_BASELINE := tests/abi/libe2trim.abi
check-abi: $(LIB_SO)
	@bash tests/abi_check.sh $(LIB_SO) $(ABI_BASELINE)

abi-baseline: $(LIB_SO)
	@bash tests/abi_check.sh --update $(LIB_SO) $(ABI_BASELINE)

# exit 77: the suite could not run here (SKIP); under CI=true a failure
check-unit: $(UNIT_BINS)
	@for t in $(UNIT_BINS); do echo "== $$t"; rc=0; $$t || rc=$$?; \
		if [ $$rc = 77 ] && [ "$${CI:-}" != true ]; then echo "SKIP $$t"; \
		elif [ $$rc != 0 ]; then echo "FAIL $$t (exit $$rc)"; exit 1; fi; \
	done

# E2E_JOBS tests side by side (the number of cores); `make install` in
# some of them needs every library built first.
check-e2e: all
	@E2TRIM=$(CURDIR)/$(BIN) bash tests/e2e/run.sh

# lax-ioctls: libext2fs's mount check asks loop devices LOOP_GET_STATUS64,
# whose number carries no size; valgrind would warn on stderr, which the
# tests hold e2trim to keep clean.
valgrind: deps
	@$(MAKE) --no-print-directory all
	@E2TRIM_WRAP="valgrind -q --error-exitcode=99 --leak-check=full \
		--show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
		--sim-hints=lax-ioctls" \
		E2TRIM=$(CURDIR)/$(BIN) bash tests/e2e/run.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@E2TRIM=$(CURDIR)/$(BIN) bash tests/bench.sh

# libFuzzer needs clang; every object is built again with its coverage.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 120
# an input that runs longer is a hang: libFuzzer stops, keeps it as
# timeout-* beside the findings, and the run fails
FUZZ_TIMEOUT ?= 20
# one line per target (tests/fuzz/NAME.c); each gets FUZZ_SECONDS
FUZZ_TARGETS := fuzz_open_plan
FB := build-fuzz
FUZZ_CFLAGS = -std=gnu11 $(WARN) -O1 -g -fno-omit-frame-pointer \
	      -fsanitize=address,undefined -fno-sanitize-recover=all \
	      -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Isrc \
	      $(FAMILIES:%=-Isrc/%) -I$(FB) $(PKG_CFLAGS)
FUZZ_OBJS := $(LIB_SRCS:src/%.c=$(FB)/%.o) $(FB)/e2trim_err.o

$(FB)/e2trim_err.c $(FB)/e2trim_err.h &: src/e2trim_err.et | $(FB)
	cd $(FB) && compile_et $(CURDIR)/src/e2trim_err.et

$(FB)/%.o: src/%.c | $(FB)/e2trim_err.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FB)/e2trim_err.o: $(FB)/e2trim_err.c
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

# every target: tests/fuzz/NAME.c, linked with the whole library
$(FUZZ_TARGETS:%=$(FB)/%): $(FB)/%: tests/fuzz/%.c $(FUZZ_OBJS) | $(FB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_OBJS) $(PKG_LIBS) -lpthread

$(FB)/fuzz_partition: tests/fuzz/fuzz_partition.c $(FUZZ_OBJS) | $(FB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_OBJS) $(PKG_LIBS) -lpthread

# the format choice alone (image_format.c): no corpus needed, 60 s finds
# its way through the magics and the tables
$(FB)/fuzz_image_format: tests/fuzz/fuzz_image_format.c $(FUZZ_OBJS) | $(FB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_OBJS) $(PKG_LIBS) -lpthread

$(FB):
	mkdir -p $@

# every fuzz target built, none run (.ci/run builds them while Ceph runs)
fuzz-build: deps
	@$(MAKE) --no-print-directory $(FUZZ_TARGETS:%=$(FB)/%) \
		$(FB)/fuzz_partition $(FB)/fuzz_image_format

# FUZZ_SECONDS each, the partition readers too; .ci/run's smoke is
# FUZZ_SECONDS=20
fuzz: deps
	@$(MAKE) --no-print-directory $(FUZZ_TARGETS:%=$(FB)/%)
	@set -e; for f in $(FUZZ_TARGETS); do echo "== $$f"; \
		FUZZ_TIMEOUT=$(FUZZ_TIMEOUT) bash tests/fuzz/run.sh $(FB)/$$f \
		$(FUZZ_SECONDS); done
	@echo "== fuzz_partition"
	@$(MAKE) --no-print-directory fuzz-partition
	@echo "== fuzz_image_format"
	@$(MAKE) --no-print-directory $(FB)/fuzz_image_format
	@mkdir -p $(FB)/image_format $(FB)/image_format-findings && \
		$(FB)/fuzz_image_format $(FB)/image_format \
		-max_total_time=$(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT) \
		-artifact_prefix=$(FB)/image_format-findings/ \
		-print_final_stats=1 2>$(FB)/image_format.log || \
		{ tail -30 $(FB)/image_format.log; exit 1; }
	@grep -E '^stat::number_of_executed_units' $(FB)/image_format.log

# the partition readers (MBR with EBR chains, GPT) over a sparse disk
fuzz-partition: deps
	@$(MAKE) --no-print-directory $(FB)/fuzz_partition
	@FUZZ_TIMEOUT=$(FUZZ_TIMEOUT) bash tests/fuzz/run_partition.sh \
		$(FB)/fuzz_partition $(FUZZ_SECONDS)

# Not part of `make check` (tests/e2e/t_mutate_smoke.sh runs a few hundred).
MUTANTS ?= 10000
SEED ?= 1
JOBS ?= $(shell nproc)
MUTATE_CASES ?= mutate-cases
E2TRIM ?= $(CURDIR)/$(BIN)
mutate: deps
	@$(MAKE) --no-print-directory all
	@E2TRIM=$(E2TRIM) python3 tests/mutate/mutate.py run -n $(MUTANTS) \
		--seed $(SEED) -j $(JOBS) --cases $(MUTATE_CASES) --progress 1000

# Deliberate code mutants (tests/mutate-code/mutants.txt), each built in a
# scratch copy and run against its tagged tests, then `make check` for
# survivors.  MUTANTS_CODE=a,b: a subset; MUTATE_CODE_QUICK=1: tagged
# tests only; MUTATE_CODE_JOBS copies side by side.  Not part of `make check`.
MUTATE_CODE_JOBS ?= 1
mutate-code: deps
	@MUTANTS_CODE="$(MUTANTS_CODE)" MUTATE_CODE_QUICK="$(MUTATE_CODE_QUICK)" \
		python3 tests/mutate-code/run.py -j $(MUTATE_CODE_JOBS)

# the mutants whose killers are Ceph tests (suite: ceph), one cluster for
# all of them (root)
mutate-code-ceph: deps-ceph
	@MUTANTS_CODE="$(MUTANTS_CODE)" MUTATE_CODE_QUICK="$(MUTATE_CODE_QUICK)" \
		python3 tests/mutate-code/run.py --suite ceph

# Everything `make install` puts in place, and `make uninstall` removes.
INSTALLED = $(SBINDIR)/e2trim $(MANDIR)/man8/e2trim.8 $(MANDIR)/man3/libe2trim.3 \
	    $(DOCDIR)/e2trim.conf \
	    $(INCLUDEDIR)/e2trim.h $(INCLUDEDIR)/e2trim_err.h \
	    $(LIBDIR)/libe2trim.a $(LIBDIR)/libe2trim.so.$(SO_VERSION) \
	    $(LIBDIR)/libe2trim.so $(LIBDIR)/pkgconfig/e2trim.pc \
	    $(INITRAMFSDIR)/hooks/e2trim \
	    $(INITRAMFSDIR)/scripts/local-premount/e2trim \
	    $(DRACUTDIR)/90e2trim/module-setup.sh \
	    $(DRACUTDIR)/90e2trim/e2trim-pre-mount.sh \
	    $(UNITDIR)/e2trim@.service

# pc_dir DIR: DIR as e2trim.pc writes it, ${prefix}/... when under PREFIX
pc_dir = $(if $(filter $(PREFIX)/%,$(1)),$${prefix}/$(patsubst $(PREFIX)/%,%,$(1)),$(1))

install: all
	install -D -m 0755 $(BIN) $(DESTDIR)$(SBINDIR)/e2trim
	install -D -m 0644 -t $(DESTDIR)$(INCLUDEDIR) src/e2trim.h $(ERR_H)
	install -D -m 0644 $(LIB_A) $(DESTDIR)$(LIBDIR)/libe2trim.a
	install -D -m 0755 $(LIB_SO) \
		$(DESTDIR)$(LIBDIR)/libe2trim.so.$(SO_VERSION)
	ln -sf libe2trim.so.$(SO_VERSION) $(DESTDIR)$(LIBDIR)/libe2trim.so
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@LIBDIR@|$(call pc_dir,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(call pc_dir,$(INCLUDEDIR))|' \
	    -e 's|@PRIVATE@|$(PC_PRIVATE)|' -e 's|@DL_LIBS@|$(DL_LIBS)|' \
	    -e 's| *$$||' src/e2trim.pc.in \
		>$(DESTDIR)$(LIBDIR)/pkgconfig/e2trim.pc
	chmod 0644 $(DESTDIR)$(LIBDIR)/pkgconfig/e2trim.pc
	install -D -m 0644 src/e2trim.8 $(DESTDIR)$(MANDIR)/man8/e2trim.8
	install -D -m 0644 src/libe2trim.3 $(DESTDIR)$(MANDIR)/man3/libe2trim.3
	install -D -m 0644 src/e2trim.conf $(DESTDIR)$(DOCDIR)/e2trim.conf
	install -D -m 0755 src/initramfs-tools/hooks/e2trim \
		$(DESTDIR)$(INITRAMFSDIR)/hooks/e2trim
	install -D -m 0755 src/initramfs-tools/scripts/local-premount/e2trim \
		$(DESTDIR)$(INITRAMFSDIR)/scripts/local-premount/e2trim
	install -D -m 0755 -t $(DESTDIR)$(DRACUTDIR)/90e2trim \
		src/dracut/90e2trim/module-setup.sh \
		src/dracut/90e2trim/e2trim-pre-mount.sh
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|/usr/sbin/e2trim|$(SBINDIR)/e2trim|' src/systemd/e2trim@.service \
		>$(DESTDIR)$(UNITDIR)/e2trim@.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/e2trim@.service

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	rmdir $(DESTDIR)$(DRACUTDIR)/90e2trim $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(LIBDIR)/pkgconfig 2>/dev/null || true

clean:
	rm -rf build build-san build-fuzz mutate-cases

# apt_need PKGS: install those of PKGS that are not installed yet.
apt_need = missing=; \
	for p in $(1); do \
		dpkg-query -W -f='$${db:Status-Status}' $$p 2>/dev/null | \
			grep -qx installed || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "Installing:$$missing"; \
		if [ "$$(id -u)" != 0 ]; then \
			echo "make: run as root, or install:$$missing" >&2; \
			exit 1; \
		fi; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive \
			apt-get -o DPkg::Lock::Timeout=900 install -y -q \
			--no-install-recommends $$missing; \
	fi

# The Debian package, built from a copy of the sources in build/deb/src,
# so that dpkg-buildpackage's files (debian/tmp, ../*.deb) never land in
# the tree.  lintian and blhc (the hardening flags) must be silent.
DEB_BUILD_PKGS = dpkg-dev debhelper lintian blhc
DEB_DIR := build/deb

deps-deb: deps
	@$(call apt_need,$(DEB_BUILD_PKGS))

deb: deps-deb
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)/src
	cp -a Makefile README.md src debian $(DEB_DIR)/src/
	cd $(DEB_DIR)/src && dpkg-buildpackage -us -uc -b >../build.log 2>&1 || \
		{ tail -40 ../build.log; exit 1; }
	lintian --fail-on error,warning --display-info $(DEB_DIR)/*.changes
	blhc $(DEB_DIR)/build.log
	@ls $(DEB_DIR)/*.deb

# Real boots under QEMU (tests/boot/, README): the kernel, the two
# initramfs generators, a Debian root for systemd, lvm2 and
# thin-provisioning-tools for the thin-pool guest.  Nothing of the
# machine's own boot set-up is used or changed.
BOOT_PKGS = qemu-system-x86 linux-image-amd64 initramfs-tools cpio \
	    lvm2 thin-provisioning-tools \
	    dracut-core mmdebstrap

deps-boot: deps-deb
	@$(call apt_need,$(BOOT_PKGS))

check-boot: deps-boot
	@start=$$(date +%s) && $(MAKE) --no-print-directory deb && \
		BOOT_START=$$start bash tests/boot/run.sh $(CURDIR)/$(DEB_DIR)

# e2trim built and tested inside Debian 13 (trixie) and Debian 11
# (bullseye) roots made by mmdebstrap from this machine's Debian mirror
# (tests/releases.sh; README "Where it builds"): make, the unit suites, a
# smoke, make deps resolved, make deb on trixie.  Roots cached in
# /var/cache/e2trim-roots (root).
RELEASES_PKGS = mmdebstrap

deps-releases:
	@$(call apt_need,$(RELEASES_PKGS))

check-releases: deps-releases
	@bash tests/releases.sh $(RELEASES)

print-deb-pkgs:
	@echo $(DEB_PKGS)

# A one-node Ceph cluster on 127.0.0.1 (tests/ceph/, README "RBD and thin
# pools"): one mon, one bluestore OSD on a sparse file, no mgr.  qemu's
# rbd driver (qemu-block-extra) is what qemu-nbd opens rbd: targets with.
CEPH_PKGS = ceph-mon ceph-osd ceph-common qemu-block-extra python3-rbd \
	    python3-rados

deps-ceph: deps
	@$(call apt_need,$(CEPH_PKGS))

check-ceph: deps-ceph $(BIN)
	E2TRIM=$(CURDIR)/$(BIN) bash tests/ceph/run.sh

# Not a test: the same cluster, an aged 1 GiB ext4 imported fresh for each
# run, e2trim beside rbd sparsify and a guest's fstrim (boots Debian's
# kernel under QEMU: deps-boot's packages).
bench-ceph: deps-ceph $(BIN)
	@E2TRIM=$(CURDIR)/$(BIN) bash tests/bench_ceph.sh
