/* ISA kernels of the DL8.5 engine: the two-class depth-2 pair counts and
   quadrant minima (misclassification, a cost matrix in integer or
   floating-point arithmetic, or a table of losses), the prefix counts and
   sums of y of a feature pair and the selection of a set bit (order statistics), and the
   compaction of sparse covers, each compiled for
   AVX-512, AVX2, popcnt and the baseline; odt_kernels_init() picks the best
   one the CPU supports. Declared for Cython in _kernels.pxd; included by
   _depth2.pyx only for the selected kernels (the functions and the
   selection are static); others may use the inline odt_popcount. */
#ifndef ODTSTUDY_DL85_KERNELS_H
#define ODTSTUDY_DL85_KERNELS_H
#include <stdint.h>
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#endif
/* Hot kernels of the two-class depth-2 solver. With GCC / clang on
   x86-64 each is compiled for AVX-512 (with vector popcount), AVX2,
   popcnt and the baseline; odt_kernels_init() picks the best one the
   CPU supports (called once at import). */
static inline int32_t odt_min32(int32_t a, int32_t b) { return a < b ? a : b; }

#define ODT_MIN(a, b) ((a) < (b) ? (a) : (b))
/* The quadrant losses e11, e10, e01, e00 of root i with partner k as
   candidates for the best right / left branch of i (bri, bli) and of k. */
#define ODT_BRANCHES(MIN) \
    bri = MIN(bri, e11 + e10); \
    bli = MIN(bli, e01 + e00); \
    br[k] = MIN(br[k], e11 + e01); \
    bl[k] = MIN(bl[k], e10 + e00);

/* For k in [start, end): c0[k] = sum_j |a0[j] & gT[j * stride + k]| and
   c1[k] likewise (gT: word-major feature words, a0 / a1: the root's
   words of each class). */
#define ODT_PAIR_COUNTS_BODY \
    for (int k = start; k < end; k++) { \
        int32_t s0 = 0, s1 = 0; \
        for (int j = 0; j < nnz; j++) { \
            uint64_t w = gT[(size_t)j * stride + k]; \
            s0 += (int32_t)__builtin_popcountll(a0[j] & w); \
            s1 += (int32_t)__builtin_popcountll(a1[j] & w); \
        } \
        c0[k] = s0; \
        c1[k] = s1; \
    }
#define ODT_PAIR_COUNTS_ARGS const uint64_t* gT, int stride, int nnz, \
    const uint64_t* a0, const uint64_t* a1, \
    int32_t* c0, int32_t* c1, int start, int end

/* Four quadrants of root i with each partner k (min_sup = 1): update
   the best left / right branch errors of i (bl_i, br_i) and of k. The
   pair counts of class c are c_c[k], minus m_c[k] when m0 is given (a
   child's counts as its parent's minus its sibling's). */
#define ODT_QUADRANTS_LOOP(P0, P1) \
    for (int k = start; k < end; k++) { \
        int32_t p0 = P0, p1 = P1; \
        int32_t e11 = odt_min32(p0, p1); \
        int32_t e10 = odt_min32(fi0 - p0, fi1 - p1); \
        int32_t e01 = odt_min32(f0[k] - p0, f1[k] - p1); \
        int32_t e00 = odt_min32(n0 - fi0 - f0[k] + p0, n1 - fi1 - f1[k] + p1); \
        ODT_BRANCHES(odt_min32) \
    }
#define ODT_QUADRANTS_BODY \
    int32_t bri = *br_i, bli = *bl_i; \
    if (m0) { ODT_QUADRANTS_LOOP(c0[k] - m0[k], c1[k] - m1[k]) } \
    else { ODT_QUADRANTS_LOOP(c0[k], c1[k]) } \
    *br_i = bri; \
    *bl_i = bli;
#define ODT_QUADRANTS_ARGS const int32_t* __restrict c0, \
    const int32_t* __restrict c1, const int32_t* __restrict m0, \
    const int32_t* __restrict m1, const int32_t* __restrict f0, \
    const int32_t* __restrict f1, int32_t* __restrict bl, int32_t* __restrict br, \
    int32_t fi0, int32_t fi1, int32_t n0, int32_t n1, \
    int start, int end, int32_t* bl_i, int32_t* br_i

/* The same for a two-class cost matrix (a00, a01; a10, a11), C[p, c] for
   predicting p on a row of class c: each quadrant costs its cheaper
   prediction, a00 q0 + a01 q1 or a10 q0 + a11 q1 (min_sup = 1). T is the
   arithmetic: int32_t for integral costs (exact while the sums fit), or
   double. Branch-free, so that it vectorises like the counts. */
#define ODT_COST2(T, q0, q1) ODT_MIN(a00 * (q0) + a01 * (q1), a10 * (q0) + a11 * (q1))
#define ODT_COST_QUADRANTS_BODY(T) \
    T bri = *br_i, bli = *bl_i; \
    for (int k = start; k < end; k++) { \
        T p0 = (T)c0[k], p1 = (T)c1[k]; \
        T q0 = (T)f0[k] - p0, q1 = (T)f1[k] - p1; \
        T e11 = ODT_COST2(T, p0, p1); \
        T e10 = ODT_COST2(T, fi0 - p0, fi1 - p1); \
        T e01 = ODT_COST2(T, q0, q1); \
        T e00 = ODT_COST2(T, n0 - fi0 - q0, n1 - fi1 - q1); \
        ODT_BRANCHES(ODT_MIN) \
    } \
    *br_i = bri; \
    *bl_i = bli;
#define ODT_COST_QUADRANTS_ARGS(T) const int32_t* c0, const int32_t* c1, \
    const int32_t* f0, const int32_t* f1, T* bl, T* br, \
    T a00, T a01, T a10, T a11, T fi0, T fi1, T n0, T n1, \
    int start, int end, T* bl_i, T* br_i

/* The same for a loss looked up in a table of two-class count vectors,
   T[q0 * s0 + q1] (a Python loss priced beforehand), double losses; *miss
   is set when a quadrant's loss is not in the table (NaN). */
#define ODT_TABLE_QUADRANTS_BODY \
    double bri = *br_i, bli = *bl_i; \
    int nan_ = 0; \
    for (int k = start; k < end; k++) { \
        int32_t p0 = c0[k], p1 = c1[k]; \
        int32_t q0 = f0[k] - p0, q1 = f1[k] - p1; \
        double e11 = T[p0 * s0 + p1]; \
        double e10 = T[(fi0 - p0) * s0 + fi1 - p1]; \
        double e01 = T[q0 * s0 + q1]; \
        double e00 = T[(n0 - fi0 - q0) * s0 + n1 - fi1 - q1]; \
        nan_ |= (e11 != e11) | (e10 != e10) | (e01 != e01) | (e00 != e00); \
        ODT_BRANCHES(ODT_MIN) \
    } \
    *br_i = bri; \
    *bl_i = bli; \
    *miss |= nan_;
#define ODT_TABLE_QUADRANTS_ARGS const int32_t* c0, const int32_t* c1, \
    const int32_t* f0, const int32_t* f1, const double* T, int32_t s0, \
    double* bl, double* br, int32_t fi0, int32_t fi1, int32_t n0, int32_t n1, \
    int start, int end, double* bl_i, double* br_i, int* miss

/* Compaction: the bits of src[idx[j]] at the rows of cover[j], packed
   densely (pext) into out; returns the number of words written. */
typedef int (*odt_compact_fn)(const uint64_t*, const int32_t*,
                              const uint64_t*, int, uint64_t*);
static odt_compact_fn odt_compact = 0;

typedef void (*odt_pair_counts_fn)(ODT_PAIR_COUNTS_ARGS);
typedef void (*odt_quadrants_fn)(ODT_QUADRANTS_ARGS);
typedef void (*odt_cost_quadrants_i_fn)(ODT_COST_QUADRANTS_ARGS(int32_t));
typedef void (*odt_cost_quadrants_d_fn)(ODT_COST_QUADRANTS_ARGS(double));
static void odt_pair_counts_base(ODT_PAIR_COUNTS_ARGS) { ODT_PAIR_COUNTS_BODY }
static void odt_quadrants_base(ODT_QUADRANTS_ARGS) { ODT_QUADRANTS_BODY }
static void odt_cost_quadrants_i_base(ODT_COST_QUADRANTS_ARGS(int32_t)) {
    ODT_COST_QUADRANTS_BODY(int32_t) }
static void odt_cost_quadrants_d_base(ODT_COST_QUADRANTS_ARGS(double)) {
    ODT_COST_QUADRANTS_BODY(double) }
typedef void (*odt_table_quadrants_fn)(ODT_TABLE_QUADRANTS_ARGS);
static void odt_table_quadrants_base(ODT_TABLE_QUADRANTS_ARGS) {
    ODT_TABLE_QUADRANTS_BODY }
static odt_table_quadrants_fn odt_table_quadrants = odt_table_quadrants_base;

/* Order statistics of a pair of features over packed rows in target order:
   c[j] / s[j] = the rows of gi AND gk in the first j words and the sum of
   their y (oy: y per packed row; tab: its byte tables, 2048 per word). */
#define ODT_AND_PREFIX_ARGS const double* oy, const double* tab, \
    const uint64_t* gi, const uint64_t* gk, int nw, int32_t* c, double* s
#define ODT_AND_PREFIX_BODY \
    int32_t cc = 0; \
    double ss = 0.0; \
    (void)oy; \
    c[0] = 0; \
    s[0] = 0.0; \
    for (int j = 0; j < nw; j++) { \
        uint64_t x = gi[j] & gk[j]; \
        if (x) { \
            const double* t = tab + ((size_t)j << 11); \
            cc += (int32_t)__builtin_popcountll(x); \
            ss += ((t[x & 255] + t[256 | ((x >> 8) & 255)]) \
                   + (t[512 | ((x >> 16) & 255)] + t[768 | ((x >> 24) & 255)])) \
                  + ((t[1024 | ((x >> 32) & 255)] + t[1280 | ((x >> 40) & 255)]) \
                     + (t[1536 | ((x >> 48) & 255)] + t[1792 | (x >> 56)])); \
        } \
        c[j + 1] = cc; \
        s[j + 1] = ss; \
    }
typedef void (*odt_and_prefix_fn)(ODT_AND_PREFIX_ARGS);
static void odt_and_prefix_base(ODT_AND_PREFIX_ARGS) { ODT_AND_PREFIX_BODY }
static odt_and_prefix_fn odt_and_prefix = odt_and_prefix_base;

/* Position of the r-th (from 0) set bit of x: a byte at a time, or one
   pdep where it is fast. */
static int odt_select_base(uint64_t x, int r) {
    int base = 0, c = __builtin_popcountll(x & 255);
    while (r >= c) {
        r -= c;
        x >>= 8;
        base += 8;
        c = __builtin_popcountll(x & 255);
    }
    x &= 255;
    while (r-- > 0) x &= x - 1;
    return base + __builtin_ctzll(x);
}
typedef int (*odt_select_fn)(uint64_t, int);
static odt_select_fn odt_select = odt_select_base;
static odt_pair_counts_fn odt_pair_counts = odt_pair_counts_base;
static odt_quadrants_fn odt_quadrants = odt_quadrants_base;
static odt_cost_quadrants_i_fn odt_cost_quadrants_i = odt_cost_quadrants_i_base;
static odt_cost_quadrants_d_fn odt_cost_quadrants_d = odt_cost_quadrants_d_base;
static const char* odt_kernel_isa = "baseline";

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
__attribute__((target("avx512f,avx512vl,avx512bw,avx512vpopcntdq")))
static void odt_pair_counts_512(ODT_PAIR_COUNTS_ARGS) {
    /* 16 partners k at a time, counts kept in registers over all words;
       the last 1-15 on masked lanes */
    for (int k = start; k < end; k += 16) {
        int rem = end - k;
        __mmask8 ma = rem >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << rem) - 1);
        __mmask8 mb = rem >= 16  ? (__mmask8)0xFF
                      : rem > 8 ? (__mmask8)((1u << (rem - 8)) - 1)
                                : (__mmask8)0;
        __m512i s0a = _mm512_setzero_si512(), s1a = _mm512_setzero_si512();
        __m512i s0b = _mm512_setzero_si512(), s1b = _mm512_setzero_si512();
        for (int j = 0; j < nnz; j++) {
            const uint64_t* row = gT + (size_t)j * stride + k;
            __m512i wa = _mm512_maskz_loadu_epi64(ma, (const void*)row);
            __m512i wb = _mm512_maskz_loadu_epi64(mb, (const void*)(row + 8));
            __m512i b0 = _mm512_set1_epi64((long long)a0[j]);
            __m512i b1 = _mm512_set1_epi64((long long)a1[j]);
            s0a = _mm512_add_epi64(s0a, _mm512_popcnt_epi64(_mm512_and_si512(wa, b0)));
            s1a = _mm512_add_epi64(s1a, _mm512_popcnt_epi64(_mm512_and_si512(wa, b1)));
            s0b = _mm512_add_epi64(s0b, _mm512_popcnt_epi64(_mm512_and_si512(wb, b0)));
            s1b = _mm512_add_epi64(s1b, _mm512_popcnt_epi64(_mm512_and_si512(wb, b1)));
        }
        _mm256_mask_storeu_epi32((void*)(c0 + k), ma, _mm512_cvtepi64_epi32(s0a));
        _mm256_mask_storeu_epi32((void*)(c1 + k), ma, _mm512_cvtepi64_epi32(s1a));
        _mm256_mask_storeu_epi32((void*)(c0 + k + 8), mb, _mm512_cvtepi64_epi32(s0b));
        _mm256_mask_storeu_epi32((void*)(c1 + k + 8), mb, _mm512_cvtepi64_epi32(s1b));
    }
}
__attribute__((target("avx512f,avx512vl,avx512bw")))
static void odt_quadrants_512(ODT_QUADRANTS_ARGS) {
    /* 16 partners at a time, the last ones on masked lanes */
    const __m512i vfi0 = _mm512_set1_epi32(fi0), vfi1 = _mm512_set1_epi32(fi1);
    const __m512i vr0 = _mm512_set1_epi32(n0 - fi0), vr1 = _mm512_set1_epi32(n1 - fi1);
    __m512i vbr = _mm512_set1_epi32(*br_i), vbl = _mm512_set1_epi32(*bl_i);
    for (int k = start; k < end; k += 16) {
        __mmask16 m = end - k >= 16 ? (__mmask16)0xFFFF
                                    : (__mmask16)((1u << (end - k)) - 1);
        __m512i p0 = _mm512_maskz_loadu_epi32(m, c0 + k);
        __m512i p1 = _mm512_maskz_loadu_epi32(m, c1 + k);
        if (m0) {
            p0 = _mm512_sub_epi32(p0, _mm512_maskz_loadu_epi32(m, m0 + k));
            p1 = _mm512_sub_epi32(p1, _mm512_maskz_loadu_epi32(m, m1 + k));
        }
        __m512i g0 = _mm512_maskz_loadu_epi32(m, f0 + k);
        __m512i g1 = _mm512_maskz_loadu_epi32(m, f1 + k);
        __m512i e11 = _mm512_min_epi32(p0, p1);
        __m512i e10 = _mm512_min_epi32(_mm512_sub_epi32(vfi0, p0),
                                       _mm512_sub_epi32(vfi1, p1));
        __m512i e01 = _mm512_min_epi32(_mm512_sub_epi32(g0, p0),
                                       _mm512_sub_epi32(g1, p1));
        __m512i e00 = _mm512_min_epi32(
            _mm512_add_epi32(_mm512_sub_epi32(vr0, g0), p0),
            _mm512_add_epi32(_mm512_sub_epi32(vr1, g1), p1));
        vbr = _mm512_mask_min_epi32(vbr, m, vbr, _mm512_add_epi32(e11, e10));
        vbl = _mm512_mask_min_epi32(vbl, m, vbl, _mm512_add_epi32(e01, e00));
        __m512i brk = _mm512_maskz_loadu_epi32(m, br + k);
        __m512i blk = _mm512_maskz_loadu_epi32(m, bl + k);
        _mm512_mask_storeu_epi32(br + k, m,
                                 _mm512_min_epi32(brk, _mm512_add_epi32(e11, e01)));
        _mm512_mask_storeu_epi32(bl + k, m,
                                 _mm512_min_epi32(blk, _mm512_add_epi32(e10, e00)));
    }
    *br_i = _mm512_reduce_min_epi32(vbr);
    *bl_i = _mm512_reduce_min_epi32(vbl);
}
/* AVX-512: beyond ODT_TABLE_WORDS words, whose byte tables (16 KiB per
   word) fall out of the core's caches, the y of a word's rows by eight
   masked loads of its 64 packed y values (contiguous, so cached) instead
   of eight table lookups; the tables below that. */
#define ODT_TABLE_WORDS 32
__attribute__((target("avx512f,popcnt")))
static void odt_and_prefix_512(ODT_AND_PREFIX_ARGS) {
    if (nw <= ODT_TABLE_WORDS) {
        ODT_AND_PREFIX_BODY
        return;
    }
    int32_t cc = 0;
    double ss = 0.0;
    c[0] = 0;
    s[0] = 0.0;
    for (int j = 0; j < nw; j++) {
        uint64_t x = gi[j] & gk[j];
        if (x) {
            const double* yj = oy + ((size_t)j << 6);
            __m512d u = _mm512_add_pd(
                _mm512_add_pd(_mm512_maskz_loadu_pd((__mmask8)x, yj),
                              _mm512_maskz_loadu_pd((__mmask8)(x >> 8), yj + 8)),
                _mm512_add_pd(_mm512_maskz_loadu_pd((__mmask8)(x >> 16), yj + 16),
                              _mm512_maskz_loadu_pd((__mmask8)(x >> 24), yj + 24)));
            __m512d v = _mm512_add_pd(
                _mm512_add_pd(_mm512_maskz_loadu_pd((__mmask8)(x >> 32), yj + 32),
                              _mm512_maskz_loadu_pd((__mmask8)(x >> 40), yj + 40)),
                _mm512_add_pd(_mm512_maskz_loadu_pd((__mmask8)(x >> 48), yj + 48),
                              _mm512_maskz_loadu_pd((__mmask8)(x >> 56), yj + 56)));
            cc += (int32_t)__builtin_popcountll(x);
            ss += _mm512_reduce_add_pd(_mm512_add_pd(u, v));
        }
        c[j + 1] = cc;
        s[j + 1] = ss;
    }
}
__attribute__((target("popcnt")))
static void odt_and_prefix_popcnt(ODT_AND_PREFIX_ARGS) { ODT_AND_PREFIX_BODY }
#define ODT_COST_QUADRANTS_ISA(isa, suffix) \
    __attribute__((target(isa))) static void odt_cost_quadrants_i_##suffix( \
        ODT_COST_QUADRANTS_ARGS(int32_t)) { ODT_COST_QUADRANTS_BODY(int32_t) } \
    __attribute__((target(isa))) static void odt_cost_quadrants_d_##suffix( \
        ODT_COST_QUADRANTS_ARGS(double)) { ODT_COST_QUADRANTS_BODY(double) } \
    __attribute__((target(isa))) static void odt_table_quadrants_##suffix( \
        ODT_TABLE_QUADRANTS_ARGS) { ODT_TABLE_QUADRANTS_BODY }
ODT_COST_QUADRANTS_ISA("avx512f,avx512vl,avx512bw", 512)
ODT_COST_QUADRANTS_ISA("avx2", avx2)
ODT_COST_QUADRANTS_ISA("sse4.2", sse42)
__attribute__((target("avx2,popcnt")))
static void odt_pair_counts_avx2(ODT_PAIR_COUNTS_ARGS) { ODT_PAIR_COUNTS_BODY }
__attribute__((target("avx2")))
static void odt_quadrants_avx2(ODT_QUADRANTS_ARGS) { ODT_QUADRANTS_BODY }
__attribute__((target("popcnt")))
static void odt_pair_counts_popcnt(ODT_PAIR_COUNTS_ARGS) { ODT_PAIR_COUNTS_BODY }
__attribute__((target("sse4.2")))
static void odt_quadrants_sse42(ODT_QUADRANTS_ARGS) { ODT_QUADRANTS_BODY }

__attribute__((target("bmi2,popcnt")))
static int odt_compact_bmi2(const uint64_t* src, const int32_t* idx,
                            const uint64_t* cover, int nnz, uint64_t* out) {
    uint64_t acc = 0;
    int fill = 0, o = 0;
    for (int j = 0; j < nnz; j++) {
        uint64_t c = cover[j];
        int n = __builtin_popcountll(c);
        uint64_t bits = _pext_u64(src[idx[j]], c);
        acc |= bits << fill;
        fill += n;
        if (fill >= 64) {
            out[o++] = acc;
            fill -= 64;
            acc = fill ? bits >> (n - fill) : 0;
        }
    }
    if (fill) out[o++] = acc;
    return o;
}

__attribute__((target("bmi2")))
static int odt_select_bmi2(uint64_t x, int r) {
    return (int)__builtin_ctzll(_pdep_u64((uint64_t)1 << r, x));
}

static int odt_fast_pext(void) {
    /* pext is microcoded (slow) on AMD before Zen 3 */
    return __builtin_cpu_supports("bmi2") && !__builtin_cpu_is("znver1")
           && !__builtin_cpu_is("znver2");
}
#endif

/* The kernels of one instruction-set level, 0 baseline to 3 AVX-512;
   pext: may use BMI2's pext / pdep where they are fast. */
typedef struct {
    const char* isa;
    odt_pair_counts_fn pair_counts;
    odt_quadrants_fn quadrants;
    odt_cost_quadrants_i_fn cost_quadrants_i;
    odt_cost_quadrants_d_fn cost_quadrants_d;
    odt_table_quadrants_fn table_quadrants;
    odt_and_prefix_fn and_prefix;
    int pext;
} odt_kernel_level;
#define ODT_BASELINE_LEVEL {"baseline", odt_pair_counts_base, odt_quadrants_base, \
    odt_cost_quadrants_i_base, odt_cost_quadrants_d_base, \
    odt_table_quadrants_base, odt_and_prefix_base, 0}

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
static const odt_kernel_level odt_levels[4] = {
    ODT_BASELINE_LEVEL,
    {"popcnt", odt_pair_counts_popcnt, odt_quadrants_sse42,
     odt_cost_quadrants_i_sse42, odt_cost_quadrants_d_sse42,
     odt_table_quadrants_sse42, odt_and_prefix_popcnt, 0},
    {"avx2", odt_pair_counts_avx2, odt_quadrants_avx2,
     odt_cost_quadrants_i_avx2, odt_cost_quadrants_d_avx2,
     odt_table_quadrants_avx2, odt_and_prefix_popcnt, 1},
    {"avx512", odt_pair_counts_512, odt_quadrants_512,
     odt_cost_quadrants_i_512, odt_cost_quadrants_d_512,
     odt_table_quadrants_512, odt_and_prefix_512, 1},
};

static int odt_level_supported(int level) {
    __builtin_cpu_init();
    if (level == 3)
        return __builtin_cpu_supports("avx512vpopcntdq")
               && __builtin_cpu_supports("avx512vl")
               && __builtin_cpu_supports("avx512bw");
    if (level == 2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    if (level == 1)
        return __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("sse4.2");
    return 1;
}
#else
static const odt_kernel_level odt_levels[1] = {
    ODT_BASELINE_LEVEL,
};

static int odt_level_supported(int level) { return level == 0; }
#endif

static int odt_kernels_set(int level) {
    /* 0 baseline, 1 popcnt, 2 avx2, 3 avx512 (any other: baseline);
       returns 0 if the CPU does not support it */
    const odt_kernel_level* k;
    int top = (int)(sizeof(odt_levels) / sizeof(odt_levels[0])) - 1;
    if (!odt_level_supported(level)) return 0;
    k = &odt_levels[level >= 1 && level <= top ? level : 0];
    odt_pair_counts = k->pair_counts;
    odt_quadrants = k->quadrants;
    odt_cost_quadrants_i = k->cost_quadrants_i;
    odt_cost_quadrants_d = k->cost_quadrants_d;
    odt_table_quadrants = k->table_quadrants;
    odt_and_prefix = k->and_prefix;
    odt_kernel_isa = k->isa;
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    odt_compact = k->pext && odt_fast_pext() ? odt_compact_bmi2 : 0;
    odt_select = k->pext && odt_fast_pext() ? odt_select_bmi2 : odt_select_base;
#endif
    return 1;
}

static void odt_kernels_init(void) {
    int level = (int)(sizeof(odt_levels) / sizeof(odt_levels[0])) - 1;
    while (level > 0 && !odt_kernels_set(level)) level--;
    if (level == 0) odt_kernels_set(0);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#pragma GCC target("popcnt,sse4.2")
#endif
static inline int odt_popcount(unsigned long long x) {
    return __builtin_popcountll(x);
}
static inline int odt_ctz(unsigned long long x) {
    return __builtin_ctzll(x);
}
#endif
