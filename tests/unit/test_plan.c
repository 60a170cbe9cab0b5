// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_plan.c - plan_check_range() and plan_run() over synthetic bitmaps
 *
 * The sources here stand in for libext2fs: a plain array with one byte
 * per block, or per cluster on bigalloc, searched the way
 * ext2fs_find_first_zero/set_block_bitmap2 search a cluster bitmap (runs
 * start and end on cluster edges, maybe before @from; a run free to the
 * end of the window ends at @last + 1).  A variant splits every run at
 * each "group" edge so that the tests prove the plan merges across them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "e2trim.h"
#include "plan.h"


#define BS 4096ULL
#define MAX_EXTENTS 256

/* ------------------------------------------------------------------ */
/* Sources */

struct collect;

/* One byte per block (cluster_ratio 1) or per cluster; non-zero: used. */
struct map_source {
	const uint8_t *used;
	uint64_t entries;
	uint32_t ratio;		/* blocks per entry */
	uint64_t blocks_count;	/* what the plan must never ask beyond */
	uint64_t split;		/* non-zero: end runs at its multiples */
	int round_end;		/* a run to the end ends on a cluster */
	unsigned int calls;
	unsigned int fail_call;	/* non-zero: this call fails, fail_err */
	errcode_t fail_err;
	uint64_t last_from;	/* the plan only ever moves forward */
};

static errcode_t map_next_free(void *priv, uint64_t from, uint64_t last,
			       uint64_t *run_start, uint64_t *run_end)
{
	struct map_source *m = priv;
	uint64_t c, cl, s, zero, set;

	/* what libext2fs would refuse with EINVAL */
	assert_true(from <= last);
	assert_true(last < m->blocks_count);
	assert_true(m->calls == 0 || from >= m->last_from);
	m->last_from = from;
	if (++m->calls == m->fail_call)
		return m->fail_err;

	cl = last / m->ratio;
	assert_true(cl < m->entries);
	for (c = from / m->ratio; c <= cl && m->used[c]; c++)
		;
	if (c > cl)
		return ENOENT;
	zero = c * m->ratio;
	for (s = c; s <= cl && !m->used[s]; s++)
		;
	if (s <= cl)
		set = s * m->ratio;
	else if (m->round_end)
		set = (cl + 1) * m->ratio;	/* may be past blocks_count */
	else
		set = last + 1;
	if (m->split) {
		uint64_t edge = (zero / m->split + 1) * m->split;

		if (set > edge)
			set = edge;
	}
	*run_start = zero;
	*run_end = set;
	return 0;
}

static struct plan_source map_source(struct map_source *m)
{
	struct plan_source src = { map_next_free, m };

	return src;
}

static errcode_t run(const struct plan_geometry *geo,
		     const struct plan_range *range,
		     const struct plan_source *src, struct collect *c,
		     struct plan_stats *st);

/* One plan over @m, its call count and order check started afresh. */
static errcode_t run_map(const struct plan_geometry *geo,
			 const struct plan_range *range,
			 struct map_source *m, struct collect *c,
			 struct plan_stats *st)
{
	struct plan_source src = map_source(m);

	m->calls = 0;
	m->last_from = 0;
	return run(geo, range, &src, c, st);
}

/* A few free runs [start, end) anywhere in a huge filesystem. */
struct sparse_source {
	const uint64_t (*runs)[2];
	size_t nr_runs;
	unsigned int calls;
};

static errcode_t sparse_next_free(void *priv, uint64_t from, uint64_t last,
				  uint64_t *run_start, uint64_t *run_end)
{
	struct sparse_source *sp = priv;
	size_t i;

	sp->calls++;
	assert_true(from <= last);
	for (i = 0; i < sp->nr_runs; i++) {
		if (sp->runs[i][1] <= from)
			continue;
		if (sp->runs[i][0] > last)
			break;
		*run_start = sp->runs[i][0] > from ? sp->runs[i][0] : from;
		*run_end = sp->runs[i][1];	/* may end past @last */
		return 0;
	}
	return ENOENT;
}

/* Claims [0, end) free whatever it is asked: the plan must clip it. */
static errcode_t liar_next_free(void *priv, uint64_t from, uint64_t last,
				uint64_t *run_start, uint64_t *run_end)
{
	unsigned int *calls = priv;

	(void)from;
	(void)last;
	(*calls)++;
	*run_start = 0;
	*run_end = 64;
	return 0;
}

/* Makes no progress: returns an empty run at @from. */
static errcode_t stuck_next_free(void *priv, uint64_t from, uint64_t last,
				 uint64_t *run_start, uint64_t *run_end)
{
	unsigned int *calls = priv;

	(void)last;
	if (++(*calls) > 100)
		fail_msg("the plan keeps asking a source that is stuck");
	*run_start = from;
	*run_end = from;
	return 0;
}

/* Returns a run past @last. */
static errcode_t beyond_next_free(void *priv, uint64_t from, uint64_t last,
				  uint64_t *run_start, uint64_t *run_end)
{
	(void)priv;
	(void)from;
	*run_start = last + 1;
	*run_end = last + 5;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Collecting what the plan emits */

struct extent {
	uint64_t start;
	uint64_t len;
};

struct collect {
	struct extent ext[MAX_EXTENTS];
	size_t n;
	size_t stop_at;		/* non-zero: return 1 on this extent */
};

static int collect_emit(void *priv, uint64_t start_bytes, uint64_t len_bytes)
{
	struct collect *c = priv;

	assert_true(c->n < MAX_EXTENTS);
	assert_true(len_bytes > 0);
	/* ascending, never touching: touching extents should be one */
	if (c->n)
		assert_true(c->ext[c->n - 1].start + c->ext[c->n - 1].len <
			    start_bytes);
	c->ext[c->n].start = start_bytes;
	c->ext[c->n].len = len_bytes;
	c->n++;
	return c->stop_at && c->n == c->stop_at;
}

static int never_emit(void *priv, uint64_t start_bytes, uint64_t len_bytes)
{
	(void)priv;
	(void)start_bytes;
	(void)len_bytes;
	fail_msg("emit called when nothing should be emitted");
	return 1;
}

/* The stats agree with what emit saw. */
static void check_stats(const struct collect *c, const struct plan_stats *st)
{
	uint64_t bytes = 0;
	size_t i;

	for (i = 0; i < c->n; i++)
		bytes += c->ext[i].len;
	assert_int_equal(st->extents, c->n);
	assert_int_equal(st->bytes, bytes);
}

/* Run the plan over @src, collecting into @c; stats checked. */
static errcode_t run(const struct plan_geometry *geo,
		     const struct plan_range *range,
		     const struct plan_source *src, struct collect *c,
		     struct plan_stats *st)
{
	errcode_t rc;

	memset(st, 0xa5, sizeof(*st));	/* must be overwritten */
	c->n = 0;
	rc = plan_run(geo, range, src, collect_emit, c, st);
	check_stats(c, st);
	return rc;
}

/* The extents emitted, as [start, end) block pairs of @bs bytes. */
static void expect_blocks(const struct collect *c, uint64_t bs,
			  const uint64_t (*want)[2], size_t n)
{
	size_t i;

	for (i = 0; i < c->n && i < n; i++) {
		if (c->ext[i].start != want[i][0] * bs ||
		    c->ext[i].len != (want[i][1] - want[i][0]) * bs)
			print_error("extent %zu: bytes %llu+%llu, want blocks "
				    "[%llu, %llu)\n", i,
				    (unsigned long long)c->ext[i].start,
				    (unsigned long long)c->ext[i].len,
				    (unsigned long long)want[i][0],
				    (unsigned long long)want[i][1]);
		assert_int_equal(c->ext[i].start, want[i][0] * bs);
		assert_int_equal(c->ext[i].len, (want[i][1] - want[i][0]) * bs);
	}
	assert_int_equal(c->n, n);
}

#define EXPECT(c, bs, ...)						\
	do {								\
		static const uint64_t want_[][2] = { __VA_ARGS__ };	\
		expect_blocks((c), (bs), want_,				\
			      sizeof(want_) / sizeof(want_[0]));	\
	} while (0)

#define TO_END UINT64_MAX

static const struct plan_geometry geo64 = {
	.block_size = BS, .cluster_ratio = 1,
	.first_data_block = 0, .blocks_count = 64,
};

static const struct plan_range whole = { 0, TO_END, 0 };

/* A 64-block map and two sources over it: plain, and split every 8. */
struct fixture {
	uint8_t used[64];
	struct map_source plain, split;
	struct collect c;
	struct plan_stats st;
};

static void fixture_init(struct fixture *f)
{
	struct map_source m = {
		.used = f->used, .entries = 64, .ratio = 1, .blocks_count = 64,
	};

	memset(f, 0, sizeof(*f));
	f->plain = m;
	f->plain.used = f->used;
	f->split = f->plain;
	f->split.split = 8;
}

static void mark_used(uint8_t *used, uint64_t start, uint64_t end)
{
	for (; start < end; start++)
		used[start] = 1;
}

static void mark_free(uint8_t *used, uint64_t start, uint64_t end)
{
	for (; start < end; start++)
		used[start] = 0;
}

/* The same answer from the plain and the group-splitting source. */
#define RUN_BOTH(f, range, ...)						\
	do {								\
		int pass_;						\
									\
		for (pass_ = 0; pass_ < 2; pass_++) {			\
			struct map_source *m_ = pass_ ?			\
				&(f)->split : &(f)->plain;		\
			assert_int_equal(run_map(&geo64, (range), m_,	\
						 &(f)->c, &(f)->st), 0);\
			__VA_ARGS__;					\
		}							\
	} while (0)

/* ------------------------------------------------------------------ */
/* plan_check_range */

static void check_range(const struct plan_geometry *geo, uint64_t start,
			uint64_t len, int want_rc, uint64_t first, uint64_t end)
{
	struct plan_range r = { start, len, 0 };
	struct plan_blocks b = { 12345, 54321 };
	int rc = plan_check_range(geo, &r, &b);

	if (rc != want_rc || (!rc && (b.first != first || b.end != end)))
		print_error("start %llu len %llu: rc %d [%llu, %llu), want "
			    "rc %d [%llu, %llu)\n", (unsigned long long)start,
			    (unsigned long long)len, rc,
			    (unsigned long long)b.first,
			    (unsigned long long)b.end, want_rc,
			    (unsigned long long)first,
			    (unsigned long long)end);
	assert_int_equal(rc, want_rc);
	if (!rc) {
		assert_int_equal(b.first, first);
		assert_int_equal(b.end, end);
	}
}

static void test_range_whole(void **state)
{
	(void)state;
	check_range(&geo64, 0, TO_END, 0, 0, 64);
	check_range(&geo64, 0, 64 * BS, 0, 0, 64);
	check_range(&geo64, 0, 64 * BS + 1, 0, 0, 64);
	check_range(&geo64, 0, 64 * BS - 1, 0, 0, 63);
	check_range(&geo64, 0, 1000 * BS, 0, 0, 64);
}

/* Only blocks wholly inside the byte range count. */
static void test_range_unaligned(void **state)
{
	(void)state;
	check_range(&geo64, 1, TO_END, 0, 1, 64);
	check_range(&geo64, BS - 1, TO_END, 0, 1, 64);
	check_range(&geo64, BS, TO_END, 0, 1, 64);
	check_range(&geo64, BS + 1, TO_END, 0, 2, 64);
	check_range(&geo64, 0, 3 * BS - 1, 0, 0, 2);
	check_range(&geo64, 0, 3 * BS, 0, 0, 3);
	check_range(&geo64, 0, 3 * BS + 1, 0, 0, 3);
	check_range(&geo64, BS - 1, 2 * BS + 1, 0, 1, 3);
	check_range(&geo64, BS + 1, 2 * BS, 0, 2, 3);
	check_range(&geo64, BS + 1, BS, 0, 2, 2);	/* none whole */
	check_range(&geo64, 1, BS, 0, 1, 1);
}

static void test_range_end_of_fs(void **state)
{
	uint64_t fs = 64 * BS;

	(void)state;
	check_range(&geo64, fs - BS, BS, 0, 63, 64);	/* the last block */
	check_range(&geo64, fs - BS, TO_END, 0, 63, 64);
	check_range(&geo64, fs - BS - 1, TO_END, 0, 63, 64);
	check_range(&geo64, fs - BS + 1, TO_END, 0, 64, 64);
	check_range(&geo64, fs - 1, TO_END, 0, 64, 64);
	check_range(&geo64, fs, TO_END, EINVAL, 0, 0);
	check_range(&geo64, fs + 1, BS, EINVAL, 0, 0);
	check_range(&geo64, UINT64_MAX, TO_END, EINVAL, 0, 0);
	check_range(&geo64, UINT64_MAX, BS, EINVAL, 0, 0);
}

/* Shorter than one block is refused, as FITRIM does. */
static void test_range_len(void **state)
{
	(void)state;
	check_range(&geo64, 0, 0, EINVAL, 0, 0);
	check_range(&geo64, 0, 1, EINVAL, 0, 0);
	check_range(&geo64, 0, BS - 1, EINVAL, 0, 0);
	check_range(&geo64, 0, BS, 0, 0, 1);
	check_range(&geo64, 0, BS + 1, 0, 0, 1);
}

/* start + len past 2^64 is "to the end", never a wrapped small end. */
static void test_range_overflow(void **state)
{
	(void)state;
	check_range(&geo64, 2 * BS, UINT64_MAX, 0, 2, 64);
	check_range(&geo64, 2 * BS, UINT64_MAX - 2 * BS + 1, 0, 2, 64);
	check_range(&geo64, 2 * BS, UINT64_MAX - 2 * BS, 0, 2, 64);
	check_range(&geo64, 63 * BS, UINT64_MAX - 100, 0, 63, 64);
	check_range(&geo64, 1, UINT64_MAX, 0, 1, 64);
}

static void test_range_geometry(void **state)
{
	struct plan_geometry g = geo64;
	uint64_t max = UINT64_MAX / BS;

	(void)state;
	g.block_size = 0;
	check_range(&g, 0, TO_END, EINVAL, 0, 0);
	g = geo64;
	g.blocks_count = 0;
	check_range(&g, 0, TO_END, EINVAL, 0, 0);

	/* blocks_count * block_size overflows 64 bits */
	g.blocks_count = max + 1;
	check_range(&g, 0, TO_END, EINVAL, 0, 0);
	g.blocks_count = UINT64_MAX;
	check_range(&g, 0, TO_END, EINVAL, 0, 0);
	g.blocks_count = 1ULL << 52;
	check_range(&g, 0, TO_END, EINVAL, 0, 0);
	/* the largest that fits */
	g.blocks_count = max;
	check_range(&g, 0, TO_END, 0, 0, max);
	check_range(&g, (max - 1) * BS, TO_END, 0, max - 1, max);
	check_range(&g, max * BS, TO_END, EINVAL, 0, 0);
}

static void test_range_first_data_block(void **state)
{
	struct plan_geometry g = {
		.block_size = 1024, .cluster_ratio = 1,
		.first_data_block = 1, .blocks_count = 64,
	};

	(void)state;
	check_range(&g, 0, TO_END, 0, 1, 64);
	check_range(&g, 0, 1024, 0, 1, 1);		/* block 0 alone */
	check_range(&g, 0, 2048, 0, 1, 2);
	check_range(&g, 1024, 1024, 0, 1, 2);
	check_range(&g, 5, 1024, 0, 1, 1);

	/* a range wholly below the first data block is empty, not inverted */
	g.first_data_block = 4;
	check_range(&g, 0, 2048, 0, 2, 2);
	check_range(&g, 1024, 2048, 0, 3, 3);
	check_range(&g, 1024, 4096, 0, 4, 5);
}

/* ------------------------------------------------------------------ */
/* plan_run: the bitmap */

static void test_all_free(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f);
	RUN_BOTH(&f, &whole, {
		EXPECT(&f.c, BS, { 0, 64 });
		assert_int_equal(f.st.bytes, 64 * BS);
		assert_int_equal(f.st.skipped_extents, 0);
		assert_int_equal(f.st.skipped_bytes, 0);
	});
	/* the plain source found it in one run and then nothing */
	assert_int_equal(f.plain.calls, 1);
	/* the split one handed it over in 8 pieces */
	assert_int_equal(f.split.calls, 8);
}

static void test_all_used(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f);
	mark_used(f.used, 0, 64);
	RUN_BOTH(&f, &whole, {
		assert_int_equal(f.c.n, 0);
		assert_int_equal(f.st.extents, 0);
		assert_int_equal(f.st.bytes, 0);
		assert_int_equal(f.st.skipped_extents, 0);
		assert_int_equal(f.st.skipped_bytes, 0);
	});
	assert_int_equal(f.plain.calls, 1);
}

static void test_alternating(void **state)
{
	struct fixture f;
	struct plan_range r = whole;
	uint64_t b;
	size_t i;

	(void)state;
	fixture_init(&f);
	for (b = 1; b < 64; b += 2)
		f.used[b] = 1;
	RUN_BOTH(&f, &whole, {
		assert_int_equal(f.c.n, 32);
		for (i = 0; i < 32; i++) {
			assert_int_equal(f.c.ext[i].start, 2 * i * BS);
			assert_int_equal(f.c.ext[i].len, BS);
		}
		assert_int_equal(f.st.skipped_extents, 0);
	});

	/* the other phase */
	for (b = 0; b < 64; b++)
		f.used[b] = !f.used[b];
	RUN_BOTH(&f, &whole, {
		assert_int_equal(f.c.n, 32);
		for (i = 0; i < 32; i++) {
			assert_int_equal(f.c.ext[i].start, (2 * i + 1) * BS);
			assert_int_equal(f.c.ext[i].len, BS);
		}
	});

	/* none is two blocks long */
	r.minlen_bytes = 2 * BS;
	RUN_BOTH(&f, &r, {
		assert_int_equal(f.c.n, 0);
		assert_int_equal(f.st.skipped_extents, 32);
		assert_int_equal(f.st.skipped_bytes, 32 * BS);
	});
}

static void test_single_free_at_edges(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f);
	mark_used(f.used, 0, 64);
	f.used[0] = 0;
	RUN_BOTH(&f, &whole, EXPECT(&f.c, BS, { 0, 1 }));

	f.used[0] = 1;
	f.used[63] = 0;
	RUN_BOTH(&f, &whole, EXPECT(&f.c, BS, { 63, 64 }));

	f.used[0] = 0;
	RUN_BOTH(&f, &whole, EXPECT(&f.c, BS, { 0, 1 }, { 63, 64 }));

	/* free everywhere but at the edges */
	mark_free(f.used, 0, 64);
	f.used[0] = 1;
	f.used[63] = 1;
	RUN_BOTH(&f, &whole, EXPECT(&f.c, BS, { 1, 63 }));
}

/* Runs split at every group edge come out as one extent each. */
static void test_merge_across_groups(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f);
	mark_used(f.used, 0, 64);
	mark_free(f.used, 5, 30);	/* groups 0..3 */
	mark_free(f.used, 32, 40);	/* exactly group 4 */
	mark_free(f.used, 47, 49);	/* one block each side of an edge */
	mark_free(f.used, 56, 64);	/* the last group, to the end */
	RUN_BOTH(&f, &whole, EXPECT(&f.c, BS, { 5, 30 }, { 32, 40 },
				    { 47, 49 }, { 56, 64 }));
	assert_int_equal(f.split.calls, 4 + 1 + 2 + 1);

	/* a range that starts and ends mid-run, mid-group */
	{
		struct plan_range r = { 6 * BS, 40 * BS, 0 };

		RUN_BOTH(&f, &r, EXPECT(&f.c, BS, { 6, 30 }, { 32, 40 }));
	}
	/* minlen sees the merged extent, not the pieces */
	{
		struct plan_range r = { 0, TO_END, 2 * BS };

		RUN_BOTH(&f, &r, {
			EXPECT(&f.c, BS, { 5, 30 }, { 32, 40 }, { 47, 49 },
			       { 56, 64 });
			assert_int_equal(f.st.skipped_extents, 0);
		});
		r.minlen_bytes = 3 * BS;
		RUN_BOTH(&f, &r, {
			EXPECT(&f.c, BS, { 5, 30 }, { 32, 40 }, { 56, 64 });
			assert_int_equal(f.st.skipped_extents, 1);
			assert_int_equal(f.st.skipped_bytes, 2 * BS);
		});
	}
}

/* ------------------------------------------------------------------ */
/* plan_run: the range */

static void test_run_range_edges(void **state)
{
	struct fixture f;
	struct plan_range r = { 0, TO_END, 0 };
	uint64_t fs = 64 * BS;

	(void)state;
	fixture_init(&f);
	mark_used(f.used, 10, 20);

	r.start_bytes = 1;
	RUN_BOTH(&f, &r, EXPECT(&f.c, BS, { 1, 10 }, { 20, 64 }));
	r.start_bytes = BS - 1;
	RUN_BOTH(&f, &r, EXPECT(&f.c, BS, { 1, 10 }, { 20, 64 }));
	r.start_bytes = BS;
	RUN_BOTH(&f, &r, EXPECT(&f.c, BS, { 1, 10 }, { 20, 64 }));
	r.start_bytes = BS + 1;
	RUN_BOTH(&f, &r, EXPECT(&f.c, BS, { 2, 10 }, { 20, 64 }));

	r.start_bytes = 9 * BS;
	r.len_bytes = 12 * BS - 1;	/* block 20 is not whole */
	RUN_BOTH(&f, &r, EXPECT(&f.c, BS, { 9, 10 }));
	r.len_bytes = 12 * BS;
	RUN_BOTH(&f, &r, EXPECT(&f.c, BS, { 9, 10 }, { 20, 21 }));
	r.len_bytes = 12 * BS + 1;
	RUN_BOTH(&f, &r, EXPECT(&f.c, BS, { 9, 10 }, { 20, 21 }));

	/* the last block exactly */
	r.start_bytes = fs - BS;
	r.len_bytes = BS;
	RUN_BOTH(&f, &r, EXPECT(&f.c, BS, { 63, 64 }));
	/* a range inside used blocks */
	r.start_bytes = 10 * BS;
	r.len_bytes = 10 * BS;
	RUN_BOTH(&f, &r, assert_int_equal(f.c.n, 0));

	/* start + len wraps past 2^64: to the end */
	r.start_bytes = 30 * BS;
	r.len_bytes = UINT64_MAX - 29 * BS;
	RUN_BOTH(&f, &r, EXPECT(&f.c, BS, { 30, 64 }));
	r.len_bytes = UINT64_MAX;
	RUN_BOTH(&f, &r, EXPECT(&f.c, BS, { 30, 64 }));
}

/* An empty range is no error and asks the source nothing. */
static void test_run_empty_range(void **state)
{
	struct fixture f;
	struct plan_range r = { BS + 1, BS, 0 };

	(void)state;
	fixture_init(&f);
	RUN_BOTH(&f, &r, assert_int_equal(f.c.n, 0));
	r.start_bytes = 64 * BS - 1;
	r.len_bytes = TO_END;
	RUN_BOTH(&f, &r, assert_int_equal(f.c.n, 0));
	assert_int_equal(f.plain.calls, 0);
	assert_int_equal(f.split.calls, 0);
}

/* A refused range: EINVAL, zero stats, no source call, no emit. */
static void test_run_einval(void **state)
{
	static const struct plan_range bad[] = {
		{ 64 * BS, TO_END, 0 },
		{ 64 * BS + 1, BS, 0 },
		{ UINT64_MAX, TO_END, 0 },
		{ 0, BS - 1, 0 },
		{ 0, 0, 0 },
	};
	struct fixture f;
	struct plan_stats st;
	struct plan_geometry g = geo64;
	struct plan_source src;
	size_t i;

	(void)state;
	fixture_init(&f);
	src = map_source(&f.plain);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&st, 0xa5, sizeof(st));
		assert_int_equal(plan_run(&geo64, &bad[i], &src,
					  never_emit, NULL, &st), EINVAL);
		assert_int_equal(st.extents, 0);
		assert_int_equal(st.bytes, 0);
		assert_int_equal(st.skipped_extents, 0);
		assert_int_equal(st.skipped_bytes, 0);
	}
	g.blocks_count = UINT64_MAX / BS + 1;
	assert_int_equal(plan_run(&g, &whole, &src, never_emit, NULL,
				  &st), EINVAL);
	assert_int_equal(f.plain.calls, 0);
}

static void test_minlen_edges(void **state)
{
	struct fixture f;
	struct plan_range r = { 0, TO_END, 0 };

	(void)state;
	fixture_init(&f);
	mark_used(f.used, 0, 64);
	mark_free(f.used, 3, 8);	/* 5 blocks */

	r.minlen_bytes = 5 * BS - 1;
	RUN_BOTH(&f, &r, {
		EXPECT(&f.c, BS, { 3, 8 });
		assert_int_equal(f.st.skipped_extents, 0);
		assert_int_equal(f.st.skipped_bytes, 0);
	});
	r.minlen_bytes = 5 * BS;
	RUN_BOTH(&f, &r, {
		EXPECT(&f.c, BS, { 3, 8 });
		assert_int_equal(f.st.skipped_extents, 0);
	});
	r.minlen_bytes = 5 * BS + 1;
	RUN_BOTH(&f, &r, {
		assert_int_equal(f.c.n, 0);
		assert_int_equal(f.st.skipped_extents, 1);
		assert_int_equal(f.st.skipped_bytes, 5 * BS);
	});

	/* 4, 5 and 6 blocks against minlen 5 blocks */
	mark_free(f.used, 20, 24);
	mark_free(f.used, 40, 46);
	r.minlen_bytes = 5 * BS;
	RUN_BOTH(&f, &r, {
		EXPECT(&f.c, BS, { 3, 8 }, { 40, 46 });
		assert_int_equal(f.st.bytes, 11 * BS);
		assert_int_equal(f.st.skipped_extents, 1);
		assert_int_equal(f.st.skipped_bytes, 4 * BS);
	});

	/* minlen applies to what is left inside the range */
	r.start_bytes = 42 * BS;
	r.minlen_bytes = 4 * BS;
	RUN_BOTH(&f, &r, {
		EXPECT(&f.c, BS, { 42, 46 });
		assert_int_equal(f.st.skipped_extents, 0);
	});
	r.start_bytes = 43 * BS;
	RUN_BOTH(&f, &r, {
		assert_int_equal(f.c.n, 0);
		assert_int_equal(f.st.skipped_extents, 1);
		assert_int_equal(f.st.skipped_bytes, 3 * BS);
	});

	/* everything too short */
	r.start_bytes = 0;
	r.minlen_bytes = UINT64_MAX;
	RUN_BOTH(&f, &r, {
		assert_int_equal(f.c.n, 0);
		assert_int_equal(f.st.skipped_extents, 3);
		assert_int_equal(f.st.skipped_bytes, 15 * BS);
	});
}

/* ------------------------------------------------------------------ */
/* plan_run: bigalloc, 1 KiB blocks, huge filesystems */

/*
 * Run over a cluster map; @pass 0-3 picks the source: split every @split
 * blocks or not, a run free to the end ending at @last + 1 or at the end
 * of its cluster.
 */
static void run_clusters(const struct plan_geometry *g,
			 const struct plan_range *r, const uint8_t *used,
			 uint64_t entries, uint64_t split, struct collect *c,
			 struct plan_stats *st, int pass)
{
	struct map_source m = {
		.used = used, .entries = entries, .ratio = g->cluster_ratio,
		.blocks_count = g->blocks_count, .split = pass & 1 ? split : 0,
		.round_end = !!(pass & 2),
	};

	assert_int_equal(run_map(g, r, &m, c, st), 0);
}

static void test_bigalloc(void **state)
{
	/* 8 clusters of 16 blocks: free are 1-2, 4 and 7 */
	static const uint8_t used[8] = { 1, 0, 0, 1, 0, 1, 1, 0 };
	struct plan_geometry g = {
		.block_size = BS, .cluster_ratio = 16,
		.first_data_block = 0, .blocks_count = 128,
	};
	struct plan_range r = { 0, TO_END, 0 };
	struct collect c = { .n = 0 };
	struct plan_stats st;
	int pass;

	(void)state;
	for (pass = 0; pass < 4; pass++) {
		/* whole clusters */
		r.start_bytes = 0;
		r.len_bytes = TO_END;
		run_clusters(&g, &r, used, 8, 16, &c, &st, pass);
		EXPECT(&c, BS, { 16, 48 }, { 64, 80 }, { 112, 128 });

		/* a range starting and ending inside free clusters */
		r.start_bytes = 20 * BS;
		r.len_bytes = 50 * BS;
		run_clusters(&g, &r, used, 8, 16, &c, &st, pass);
		EXPECT(&c, BS, { 20, 48 }, { 64, 70 });

		/* unaligned bytes inside a cluster */
		r.start_bytes = 33 * BS - 1;
		r.len_bytes = 14 * BS + 2;
		run_clusters(&g, &r, used, 8, 16, &c, &st, pass);
		EXPECT(&c, BS, { 33, 47 });

		/* a range inside used clusters */
		r.start_bytes = 48 * BS;
		r.len_bytes = 16 * BS;
		run_clusters(&g, &r, used, 8, 16, &c, &st, pass);
		assert_int_equal(c.n, 0);

		/* minlen counts blocks trimmed, after the clip */
		r.start_bytes = 20 * BS;
		r.len_bytes = TO_END;
		r.minlen_bytes = 16 * BS;
		run_clusters(&g, &r, used, 8, 16, &c, &st, pass);
		EXPECT(&c, BS, { 20, 48 }, { 64, 80 }, { 112, 128 });
		r.minlen_bytes = 16 * BS + 1;
		run_clusters(&g, &r, used, 8, 16, &c, &st, pass);
		EXPECT(&c, BS, { 20, 48 });
		assert_int_equal(st.skipped_extents, 2);
		assert_int_equal(st.skipped_bytes, 32 * BS);
		r.minlen_bytes = 0;
	}
}

/* blocks_count not a multiple of the cluster: the last one is partial. */
static void test_bigalloc_partial_last_cluster(void **state)
{
	static const uint8_t all_free[8];
	static const uint8_t tail_free[8] = { 1, 1, 1, 1, 1, 1, 1, 0 };
	struct plan_geometry g = {
		.block_size = BS, .cluster_ratio = 16,
		.first_data_block = 0, .blocks_count = 120,
	};
	struct plan_range r = { 0, TO_END, 0 };
	struct collect c = { .n = 0 };
	struct plan_stats st;
	int pass;

	(void)state;
	for (pass = 0; pass < 4; pass++) {
		run_clusters(&g, &r, all_free, 8, 32, &c, &st, pass);
		EXPECT(&c, BS, { 0, 120 });
		run_clusters(&g, &r, tail_free, 8, 32, &c, &st, pass);
		EXPECT(&c, BS, { 112, 120 });

		r.start_bytes = 115 * BS + 1;
		run_clusters(&g, &r, tail_free, 8, 32, &c, &st, pass);
		EXPECT(&c, BS, { 116, 120 });
		r.start_bytes = 119 * BS;
		run_clusters(&g, &r, tail_free, 8, 32, &c, &st, pass);
		EXPECT(&c, BS, { 119, 120 });
		r.start_bytes = 0;
	}
	/* no byte past blocks_count * block_size, ever */
	assert_int_equal(st.bytes, BS);
	assert_int_equal(c.ext[0].start + c.ext[0].len, 120 * BS);
}

/* 1 KiB blocks: block 0 is the boot block and never free space. */
static void test_first_data_block(void **state)
{
	uint8_t used[64] = { 0 };
	struct plan_geometry g = {
		.block_size = 1024, .cluster_ratio = 1,
		.first_data_block = 1, .blocks_count = 64,
	};
	struct map_source m = {
		.used = used, .entries = 64, .ratio = 1, .blocks_count = 64,
	};
	struct plan_range r = { 0, TO_END, 0 };
	unsigned int liar_calls = 0;
	struct plan_source liar = { liar_next_free, &liar_calls };
	struct collect c = { .n = 0 };
	struct plan_stats st;

	(void)state;
	/* the map says block 0 is free: it is not asked about */
	assert_int_equal(run_map(&g, &r, &m, &c, &st), 0);
	EXPECT(&c, 1024, { 1, 64 });
	assert_int_equal(c.ext[0].start, 1024);

	used[1] = 1;
	assert_int_equal(run_map(&g, &r, &m, &c, &st), 0);
	EXPECT(&c, 1024, { 2, 64 });
	used[1] = 0;

	/* a range of block 0 alone is empty, not an error */
	r.len_bytes = 1024;
	assert_int_equal(run_map(&g, &r, &m, &c, &st), 0);
	assert_int_equal(c.n, 0);
	r.len_bytes = 2048;
	assert_int_equal(run_map(&g, &r, &m, &c, &st), 0);
	EXPECT(&c, 1024, { 1, 2 });

	/* a source that reports block 0 free anyway is clipped */
	r.len_bytes = TO_END;
	assert_int_equal(run(&g, &r, &liar, &c, &st), 0);
	EXPECT(&c, 1024, { 1, 64 });
	assert_int_equal(liar_calls, 1);
}

/* Block numbers past 2^32 and byte offsets past 2^42: nothing truncated. */
static void test_huge_filesystem(void **state)
{
	static const uint64_t bc = (5ULL << 30) + 7;	/* 5368709127 */
	static const uint64_t runs[][2] = {
		{ (1ULL << 32) - 3, (1ULL << 32) + 5 },
		{ bc - 100, bc - 50 },
		{ bc - 3, bc + 10 },	/* reported past the end */
	};
	/* the same runs, split at 2^32 as a group edge might */
	static const uint64_t split_runs[][2] = {
		{ (1ULL << 32) - 3, 1ULL << 32 },
		{ 1ULL << 32, (1ULL << 32) + 5 },
		{ bc - 100, bc - 60 },
		{ bc - 60, bc - 50 },
		{ bc - 3, bc },
	};
	struct plan_geometry g = {
		.block_size = 1024, .cluster_ratio = 1,
		.first_data_block = 1, .blocks_count = bc,
	};
	struct sparse_source sp = { runs, 3, 0 };
	struct sparse_source sp_split = { split_runs, 5, 0 };
	struct plan_source src = { sparse_next_free, &sp };
	struct plan_source src_split = { sparse_next_free, &sp_split };
	struct plan_range r = { 0, TO_END, 0 };
	struct collect c = { .n = 0 };
	struct plan_stats st;
	int pass;

	(void)state;
	for (pass = 0; pass < 2; pass++) {
		const struct plan_source *s = pass ? &src_split : &src;

		r.start_bytes = 0;
		assert_int_equal(run(&g, &r, s, &c, &st), 0);
		assert_int_equal(c.n, 3);
		assert_int_equal(c.ext[0].start, 4398046508032ULL);
		assert_int_equal(c.ext[0].len, 8192);
		assert_int_equal(c.ext[1].start, 5497558043648ULL);
		assert_int_equal(c.ext[1].len, 51200);
		assert_int_equal(c.ext[2].start, 5497558142976ULL);
		assert_int_equal(c.ext[2].len, 3072);
		assert_int_equal(c.ext[2].start + c.ext[2].len,
				 5497558146048ULL);	/* bc * 1024 */
		assert_int_equal(st.bytes, 8192 + 51200 + 3072);

		/* a range starting past 2^32 blocks, unaligned */
		r.start_bytes = (1ULL << 42) + 1;	/* 1 byte into 2^32 */
		assert_int_equal(run(&g, &r, s, &c, &st), 0);
		assert_int_equal(c.n, 3);
		assert_int_equal(c.ext[0].start, 4398046512128ULL);
		assert_int_equal(c.ext[0].len, 4096);

		/* the last block only */
		r.start_bytes = 5497558146048ULL - 1024;
		assert_int_equal(run(&g, &r, s, &c, &st), 0);
		EXPECT(&c, 1024, { bc - 1, bc });

		/* the end of the filesystem is refused */
		r.start_bytes = 5497558146048ULL;
		assert_int_equal(run(&g, &r, s, &c, &st), EINVAL);
	}
	/* a few calls, not one per block */
	assert_true(sp.calls < 20);
	assert_true(sp_split.calls < 30);
}

/* ------------------------------------------------------------------ */
/* plan_run: stopping and failing */

static void test_emit_stops(void **state)
{
	struct fixture f;
	size_t stop;

	(void)state;
	fixture_init(&f);
	mark_used(f.used, 0, 64);
	mark_free(f.used, 2, 4);
	mark_free(f.used, 10, 20);
	mark_free(f.used, 30, 31);
	mark_free(f.used, 60, 64);

	for (stop = 1; stop <= 4; stop++) {
		int pass;

		for (pass = 0; pass < 2; pass++) {
			struct map_source *m = pass ? &f.split : &f.plain;

			f.c.stop_at = stop;
			assert_int_equal(run_map(&geo64, &whole, m, &f.c,
						 &f.st), E2TRIM_ERR_INTERRUPTED);
			/* the one that said stop, and none after it */
			assert_int_equal(f.c.n, stop);
			assert_int_equal(f.st.extents, stop);
		}
	}
	/* stopping at the last extent is still a stop */
	assert_int_equal(f.c.ext[3].start, 60 * BS);
	f.c.stop_at = 5;
	assert_int_equal(run_map(&geo64, &whole, &f.plain, &f.c, &f.st), 0);
	EXPECT(&f.c, BS, { 2, 4 }, { 10, 20 }, { 30, 31 }, { 60, 64 });
}

/* Skipped extents do not reach emit, so they cannot stop the plan. */
static void test_emit_stop_after_skips(void **state)
{
	struct fixture f;
	struct plan_range r = { 0, TO_END, 2 * BS };

	(void)state;
	fixture_init(&f);
	mark_used(f.used, 0, 64);
	mark_free(f.used, 2, 3);
	mark_free(f.used, 10, 20);
	mark_free(f.used, 30, 31);
	mark_free(f.used, 40, 50);
	f.c.stop_at = 1;
	assert_int_equal(run_map(&geo64, &r, &f.plain, &f.c, &f.st), E2TRIM_ERR_INTERRUPTED);
	EXPECT(&f.c, BS, { 10, 20 });
	assert_int_equal(f.st.skipped_extents, 1);
	assert_int_equal(f.st.skipped_bytes, BS);
}

static void test_source_error(void **state)
{
	struct fixture f;
	unsigned int call;

	(void)state;
	fixture_init(&f);
	mark_used(f.used, 0, 64);
	mark_free(f.used, 2, 4);
	mark_free(f.used, 10, 20);
	mark_free(f.used, 30, 31);

	/* failing the first call: nothing emitted */
	f.plain.fail_call = 1;
	f.plain.fail_err = EIO;
	assert_int_equal(run_map(&geo64, &whole, &f.plain, &f.c, &f.st), EIO);
	assert_int_equal(f.c.n, 0);
	assert_int_equal(f.st.extents, 0);
	assert_int_equal(f.st.skipped_extents, 0);

	/* failing the n-th: what came before stands, nothing after */
	for (call = 2; call <= 4; call++) {
		f.plain.fail_call = call;
		f.plain.fail_err = EXT2_ET_BLOCK_BITMAP_CSUM_INVALID;
		assert_int_equal(run_map(&geo64, &whole, &f.plain, &f.c,
					 &f.st),
				 EXT2_ET_BLOCK_BITMAP_CSUM_INVALID);
		assert_int_equal(f.plain.calls, call);
		assert_int_equal(f.c.n, call - 2);
	}

	/* the split source fails in the middle of a merged extent */
	f.split.fail_call = 2;	/* [10, 16) came, [16, 20) fails */
	f.split.fail_err = EIO;
	mark_used(f.used, 2, 4);
	assert_int_equal(run_map(&geo64, &whole, &f.split, &f.c, &f.st), EIO);
	assert_int_equal(f.c.n, 0);	/* half an extent is not emitted */
}

/* A source that breaks its contract is caught, not looped on. */
static void test_source_no_progress(void **state)
{
	unsigned int calls = 0;
	struct plan_source stuck = { stuck_next_free, &calls };
	struct plan_source beyond = { beyond_next_free, NULL };
	struct collect c = { .n = 0 };
	struct plan_stats st;

	(void)state;
	assert_int_equal(run(&geo64, &whole, &stuck, &c, &st), EFAULT);
	assert_int_equal(calls, 1);
	assert_int_equal(c.n, 0);
	assert_int_equal(run(&geo64, &whole, &beyond, &c, &st), EFAULT);
	assert_int_equal(c.n, 0);
}

/* ------------------------------------------------------------------ */
/* plan_run against a block-by-block oracle, on random maps */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

/* The answer, one block at a time. */
static size_t oracle(const struct plan_geometry *g, const uint8_t *used,
		     const struct plan_blocks *b, uint64_t minlen,
		     struct extent *out, struct plan_stats *st)
{
	uint64_t blk, start = 0;
	int in_run = 0;
	size_t n = 0;

	memset(st, 0, sizeof(*st));
	for (blk = b->first; blk <= b->end; blk++) {
		int is_free = blk < b->end && blk >= g->first_data_block &&
			      !used[blk / g->cluster_ratio];
		uint64_t len;

		if (is_free && !in_run) {
			start = blk;
			in_run = 1;
		}
		if (is_free || !in_run)
			continue;
		in_run = 0;
		len = (blk - start) * g->block_size;
		if (len < minlen) {
			st->skipped_extents++;
			st->skipped_bytes += len;
			continue;
		}
		out[n].start = start * g->block_size;
		out[n].len = len;
		n++;
		st->extents++;
		st->bytes += len;
	}
	return n;
}

/*
 * The window of blocks a range covers, worked out here and not by
 * plan_check_range(), the function under test: FITRIM's rules in 128-bit
 * arithmetic (no overflow to think about).  -1: the range is refused.
 */
static int oracle_window(const struct plan_geometry *g,
			 const struct plan_range *r, struct plan_blocks *b)
{
	unsigned __int128 bs = g->block_size, fs = bs * g->blocks_count;
	unsigned __int128 start = r->start_bytes, end = start + r->len_bytes;

	if (!bs || !g->blocks_count || start >= fs || r->len_bytes < bs)
		return -1;
	if (end > fs)
		end = fs;
	b->first = (uint64_t)((start + bs - 1) / bs);	/* whole blocks only */
	b->end = (uint64_t)(end / bs);
	if (b->first < g->first_data_block)
		b->first = g->first_data_block;
	if (b->first > b->end)
		b->first = b->end;
	return 0;
}

static void test_random_against_oracle(void **state)
{
	static const uint32_t ratios[] = { 1, 2, 4, 16 };
	uint8_t used[256];
	struct extent want[MAX_EXTENTS];
	struct collect c = { .n = 0 };
	struct plan_stats st, want_st;
	int iter;

	(void)state;
	for (iter = 0; iter < 4000; iter++) {
		struct plan_geometry g = {
			.block_size = (rng() & 1) ? 1024 : 4096,
			.cluster_ratio = ratios[rng() % 4],
		};
		struct map_source m = { .used = used };
		struct plan_range r;
		struct plan_blocks b, mine;
		uint64_t i, fs, density = rng() % 5;
		errcode_t rc;
		size_t n;

		g.blocks_count = 1 + rng() % 200;
		g.first_data_block = g.cluster_ratio == 1 && g.block_size ==
				     1024 && g.blocks_count > 1;
		m.ratio = g.cluster_ratio;
		m.entries = (g.blocks_count + g.cluster_ratio - 1) /
			    g.cluster_ratio;
		m.blocks_count = g.blocks_count;
		/* group edges fall on cluster edges */
		m.split = (rng() & 1) ? g.cluster_ratio * (1 + rng() % 8) : 0;
		for (i = 0; i < m.entries; i++)
			used[i] = rng() % 5 < density;

		fs = g.blocks_count * g.block_size;
		r.start_bytes = (rng() & 1) ? 0 : rng() % (fs + 2);
		r.len_bytes = (rng() & 1) ? TO_END : rng() % (fs + 2);
		r.minlen_bytes = (rng() & 1) ? 0 : rng() % (8 * g.block_size);

		m.round_end = rng() & 1;
		rc = run_map(&g, &r, &m, &c, &st);
		if (oracle_window(&g, &r, &mine)) {
			assert_int_equal(rc, EINVAL);
			assert_int_equal(c.n, 0);
			assert_int_not_equal(plan_check_range(&g, &r, &b), 0);
			continue;
		}
		/* plan_check_range() agrees with the window worked out here */
		assert_int_equal(plan_check_range(&g, &r, &b), 0);
		assert_int_equal(b.first, mine.first);
		assert_int_equal(b.end, mine.end);
		if (rc)
			print_error("iter %d: bs %u ratio %u fdb %llu "
				    "count %llu split %llu round %d "
				    "range %llu+%llu\n",
				    iter, g.block_size, g.cluster_ratio,
				    (unsigned long long)g.first_data_block,
				    (unsigned long long)g.blocks_count,
				    (unsigned long long)m.split, m.round_end,
				    (unsigned long long)r.start_bytes,
				    (unsigned long long)r.len_bytes);
		assert_int_equal(rc, 0);
		n = oracle(&g, used, &mine, r.minlen_bytes, want, &want_st);
		assert_int_equal(c.n, n);
		assert_memory_equal(c.ext, want, n * sizeof(want[0]));
		assert_memory_equal(&st, &want_st,
				    offsetof(struct plan_stats, hist));
		/* the histogram holds every extent, the minimum not applied */
		assert_int_equal(st.hist.extents, st.extents + st.skipped_extents);
		assert_int_equal(st.hist.bytes, st.bytes + st.skipped_bytes);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_range_whole),
		cmocka_unit_test(test_range_unaligned),
		cmocka_unit_test(test_range_end_of_fs),
		cmocka_unit_test(test_range_len),
		cmocka_unit_test(test_range_overflow),
		cmocka_unit_test(test_range_geometry),
		cmocka_unit_test(test_range_first_data_block),
		cmocka_unit_test(test_all_free),
		cmocka_unit_test(test_all_used),
		cmocka_unit_test(test_alternating),
		cmocka_unit_test(test_single_free_at_edges),
		cmocka_unit_test(test_merge_across_groups),
		cmocka_unit_test(test_run_range_edges),
		cmocka_unit_test(test_run_empty_range),
		cmocka_unit_test(test_run_einval),
		cmocka_unit_test(test_minlen_edges),
		cmocka_unit_test(test_bigalloc),
		cmocka_unit_test(test_bigalloc_partial_last_cluster),
		cmocka_unit_test(test_first_data_block),
		cmocka_unit_test(test_huge_filesystem),
		cmocka_unit_test(test_emit_stops),
		cmocka_unit_test(test_emit_stop_after_skips),
		cmocka_unit_test(test_source_error),
		cmocka_unit_test(test_source_no_progress),
		cmocka_unit_test(test_random_against_oracle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
