/* Escaping (JSON strings in profile output, control bytes in label diagnostics) and the
 * histogram's bucket edges and percentiles (src/profile/base/histogram.c, histogram.h). */
#include <string.h>
#include "labels/names.h"
#include "profile/base/histogram.h"
#include "profile/base/out.h"
#include "test_core.h"

static void expect_json(const char *in, size_t size, const char *want, int line)
{
    char buf[64];
    size_t n = nvtxcorr_fmt_json(buf, size, in);
    if (n != strlen(want) || memcmp(buf, want, n)) {
        fprintf(stderr, "test_text.c:%d: fmt_json gave \"%.*s\", expected \"%s\"\n", line, (int)n,
                buf, want);
        test_failures++;
    }
}

static void expect_controls(const char *in, size_t size, const char *want, int line)
{
    char buf[64];
    size_t n = nvtxcorr_escape_controls(buf, size, in);
    if (n != strlen(want) || strcmp(buf, want)) {
        fprintf(stderr, "test_text.c:%d: escape_controls gave \"%s\", expected \"%s\"\n", line, buf,
                want);
        test_failures++;
    }
}

void test_escape(void)
{
    expect_json("plain_kernel<int>", 64, "plain_kernel<int>", __LINE__);
    expect_json("a\"b\\c", 64, "a\\\"b\\\\c", __LINE__);
    expect_json("\n\t\x01\x1f", 64, "\\n\\t\\u0001\\u001f", __LINE__);
    expect_json("caf\xc3\xa9", 64, "caf\xc3\xa9", __LINE__);   /* UTF-8 passes */
    expect_json("x\xff\xc3", 64, "x\\u00ff\\u00c3", __LINE__); /* bytes that are not */
    expect_json("ab\"", 3, "ab", __LINE__);                    /* cut at a whole escape */
    expect_json("a\xc3\xa9", 2, "a", __LINE__);                /* cut at a whole character */
    expect_json("", 64, "", __LINE__);

    expect_controls("k\x01x\x7f", 64, "k\\x01x\\x7f", __LINE__);
    expect_controls("tab\there", 64, "tab\\x09here", __LINE__);
    expect_controls("\xc3\xa9t\xc3\xa9", 64, "\xc3\xa9t\xc3\xa9", __LINE__);
    expect_controls("ab\x01", 5, "ab", __LINE__); /* "\x01" needs 4 more and the NUL */
    expect_controls("abc", 3, "ab", __LINE__);
}

void test_histogram(void)
{
    /* Below 8 ns one bucket each; then 4 per power of two, the last one open. */
    for (uint64_t v = 0; v < 8; v++) {
        CHECK_EQ(prof_bucket(v), v);
        CHECK_EQ(nvtxcorr_prof_bucket_low((unsigned)v), v);
    }
    CHECK_EQ(prof_bucket(8), 8);
    CHECK_EQ(prof_bucket(9), 8);
    CHECK_EQ(prof_bucket(10), 9);
    CHECK_EQ(prof_bucket(15), 11);
    CHECK_EQ(prof_bucket(16), 12);
    CHECK_EQ(nvtxcorr_prof_bucket_low(8), 8);
    CHECK_EQ(nvtxcorr_prof_bucket_low(9), 10);
    CHECK_EQ(nvtxcorr_prof_bucket_low(12), 16);
    CHECK_EQ(prof_bucket((1ull << 40) - 1), PROF_BUCKETS - 1);
    CHECK_EQ(prof_bucket(1ull << 40), PROF_BUCKETS - 1);
    CHECK_EQ(prof_bucket(UINT64_MAX), PROF_BUCKETS - 1);
    /* Every edge: the bucket's low edge is in it and the value before it in the one below. */
    for (unsigned b = 1; b < PROF_BUCKETS; b++) {
        uint64_t lo = nvtxcorr_prof_bucket_low(b);
        CHECK(lo > nvtxcorr_prof_bucket_low(b - 1));
        CHECK_EQ(prof_bucket(lo), b);
        CHECK_EQ(prof_bucket(lo - 1), b - 1);
    }

    /* Percentiles: the midpoint of the bucket that holds it, within the exact min and max. */
    uint64_t hist[PROF_BUCKETS] = {0};
    CHECK_EQ(nvtxcorr_prof_percentile(hist, 0, 0, 0, 500), 0);
    hist[prof_bucket(5)] = 99;
    hist[prof_bucket(1000)] = 1; /* [896, 1024) */
    CHECK_EQ(nvtxcorr_prof_percentile(hist, 100, 5, 1000, 500), 5);
    CHECK_EQ(nvtxcorr_prof_percentile(hist, 100, 5, 1000, 990), 5);
    CHECK_EQ(nvtxcorr_prof_percentile(hist, 100, 5, 1000, 991), 960);
    CHECK_EQ(nvtxcorr_prof_percentile(hist, 100, 5, 1000, 1000), 960);
    CHECK_EQ(nvtxcorr_prof_percentile(hist, 100, 5, 900, 1000), 900); /* kept within max */
    uint64_t one[PROF_BUCKETS] = {0};
    one[prof_bucket(1000)] = 1;
    CHECK_EQ(nvtxcorr_prof_percentile(one, 1, 1000, 1000, 500), 1000); /* kept within min */
    uint64_t top[PROF_BUCKETS] = {0};
    top[PROF_BUCKETS - 1] = 1; /* the open bucket's midpoint reaches to max */
    uint64_t lo = nvtxcorr_prof_bucket_low(PROF_BUCKETS - 1), max = lo + 1000;
    CHECK_EQ(nvtxcorr_prof_percentile(top, 1, lo, max, 500), lo + (max + 1 - lo) / 2);
}
