/*
 * Fused float32 step kernel of the batched noisy gradient descent (spec M2, M3.1, M3.2, M4;
 * issue 12). Loaded with ctypes by mpdp.engine; the NumPy path there is the reference and the
 * fallback when this library is missing or the CPU lacks AVX2 and FMA.
 *
 * One call runs `steps` steps of, for every column k of a block,
 *
 *     theta_k <- decay_k theta_k - sum_i s_ik x_i - linear_k - noise_{t,k},
 *     s_ik = coef_ik / (1 + exp(x_i . theta_k)),
 *
 * where the rows x_i are already multiplied by their labels and coef_ik = -eta_k w_ik (the
 * engine folds the step size into the weights). Per tile of rows the kernel computes the
 * products x_i . theta_k, the coefficients (a vectorised exp), and the tile's share of the
 * gradient (a column group x a few chunks of features), while the tile is in the L1 cache: the
 * two matrix products of the NumPy path and its three elementwise passes, in one pass over
 * the rows. The products come, for a block given a transposed copy of its tiles (the engine
 * gives one to blocks small enough to keep it in cache, and with AVX-512 to wide ones), from
 * that copy (rows in the lanes, a broadcast parameter per feature and column: each product is
 * added in feature order, no horizontal sums); otherwise (Xt NULL: a second copy would double
 * the block's memory traffic) from the row-major tile (8 partial sums per product, features
 * j mod 8, added by a fixed tree). Layouts (float32, row-major):
 *     X      n x P   (P a multiple of 8 and >= p; the padding columns are zero)
 *     Xt     NULL, or the tiles of X transposed: the tile starting at row a (a multiple of
 *            tile_rows, which must then be a multiple of the lanes) is the p x tile_rows array at
 *            Xt + a * p, rows past n zero
 *     theta  K x P   (padding columns zero, and kept zero when linear and noise pad with zeros)
 *     coef   per_row with Xt: tile by tile like Xt, the tile starting at row a is the
 *            K x tile_rows array at coef + a * K (rows past n zero); per_row without Xt:
 *            n x K; else K values (the same for every row)
 *     decay  K, linear K x P or NULL, noise steps x K x P.
 * The gradient is added in row order per feature. The order of every addition depends only on
 * the rows, the features and whether Xt is given (not on tile_rows), never on the other columns: a
 * column's result is the same alone or in any batch that gives it the same kind of block.
 *
 * The kernel is compiled twice from _gd_kernel_simd.h: for AVX2 + FMA (8 lanes) and for
 * AVX-512 (16 lanes; the transposed tiles are then a multiple of 16 rows). Both add the same
 * terms in the same order, so they give bit-identical results for the same Xt or NULL; mpdp_gd_lanes tells the caller
 * which one mpdp_gd_run uses.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Status codes of mpdp_gd_run (the same numbers in mpdp.fused_kernel.STATUS). */
enum { MPDP_OK = 0, MPDP_NO_MEMORY = -1, MPDP_UNSUPPORTED = -2 };

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MPDP_X86 1
#else
#define MPDP_X86 0
#endif

/* 1 when the AVX2 kernel can run on this CPU (x86-64 with AVX2 and FMA), else 0. */
int mpdp_gd_supported(void) {
#if MPDP_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

/* 1 when the AVX-512 kernel can run on this CPU (AVX-512 F and VL besides AVX2 and FMA). */
int mpdp_gd_supported_avx512(void) {
#if MPDP_X86
    return mpdp_gd_supported() && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512vl");
#else
    return 0;
#endif
}

#if MPDP_X86

/* Width of the column group starting at k0: groups of 4 columns, except that the last 3 to 6
 * columns form one group (K = 6 is one group of 6, not 4 + 2: a group of 2 columns has too few
 * independent accumulators to keep the FMA units busy). */
static inline int group_size(long K, long k0) {
    long left = K - k0;
    return left <= 6 ? (int)left : 4;
}

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

/* ---- AVX2 + FMA: 8 lanes, 16 vector registers ---- */
#define VF __m256
#define W 8
#define FN(name) CAT(name, _avx2)
#define TGT __attribute__((target("avx2,fma")))
#define ITGT static inline __attribute__((always_inline, target("avx2,fma")))
#define V_LOAD _mm256_loadu_ps
#define V_STORE _mm256_storeu_ps
#define V_SET1 _mm256_set1_ps
#define V_ZERO _mm256_setzero_ps
#define V_BCAST _mm256_broadcast_ss
#define V_ADD _mm256_add_ps
#define V_SUB _mm256_sub_ps
#define V_MUL _mm256_mul_ps
#define V_DIV _mm256_div_ps
#define V_MIN _mm256_min_ps
#define V_MAX _mm256_max_ps
#define V_FMADD _mm256_fmadd_ps
#define V_FNMADD _mm256_fnmadd_ps
#define V_FMSUB _mm256_fmsub_ps
#define V_ROUND(x) _mm256_round_ps((x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define V_POW2I(n) _mm256_castsi256_ps(_mm256_slli_epi32( \
    _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23))
#define V_MASK8(n) _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define V_LOAD_N(ptr, n) _mm256_maskload_ps((ptr), V_MASK8(n))
#define V_STORE_N(ptr, v, n) _mm256_maskstore_ps((ptr), V_MASK8(n), (v))
/* RB * KC accumulators + RB row registers + 1 broadcast fit the 16 registers */
#define DOT_CHUNKS(KC) ((KC) <= 2 ? 4 : (KC) <= 4 ? 3 : 2)
#define ROW_DOT_ROWS(KC) ((KC) == 1 ? 6 : (KC) == 2 ? 5 : (KC) <= 4 ? 3 : 2)
#define AXPY_CHUNKS 2
#include "_gd_kernel_simd.h"
#undef VF
#undef W
#undef FN
#undef TGT
#undef ITGT
#undef V_LOAD
#undef V_STORE
#undef V_SET1
#undef V_ZERO
#undef V_BCAST
#undef V_ADD
#undef V_SUB
#undef V_MUL
#undef V_DIV
#undef V_MIN
#undef V_MAX
#undef V_FMADD
#undef V_FNMADD
#undef V_FMSUB
#undef V_ROUND
#undef V_POW2I
#undef V_LOAD_N
#undef V_STORE_N
#undef DOT_CHUNKS
#undef ROW_DOT_ROWS
#undef AXPY_CHUNKS

/* ---- AVX-512: 16 lanes, 32 vector registers ---- */
#define VF __m512
#define W 16
#define FN(name) CAT(name, _avx512)
#define TGT __attribute__((target("avx512f,avx512vl,avx2,fma")))
#define ITGT static inline __attribute__((always_inline, target("avx512f,avx512vl,avx2,fma")))
#define V_LOAD _mm512_loadu_ps
#define V_STORE _mm512_storeu_ps
#define V_SET1 _mm512_set1_ps
#define V_ZERO _mm512_setzero_ps
#define V_BCAST(ptr) _mm512_set1_ps(*(ptr))
#define V_ADD _mm512_add_ps
#define V_SUB _mm512_sub_ps
#define V_MUL _mm512_mul_ps
#define V_DIV _mm512_div_ps
#define V_MIN _mm512_min_ps
#define V_MAX _mm512_max_ps
#define V_FMADD _mm512_fmadd_ps
#define V_FNMADD _mm512_fnmadd_ps
#define V_FMSUB _mm512_fmsub_ps
#define V_ROUND(x) _mm512_roundscale_ps((x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define V_POW2I(n) _mm512_castsi512_ps(_mm512_slli_epi32( \
    _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23))
#define V_LOAD_N(ptr, n) _mm512_maskz_loadu_ps((__mmask16)((1u << (n)) - 1u), (ptr))
#define V_STORE_N(ptr, v, n) _mm512_mask_storeu_ps((ptr), (__mmask16)((1u << (n)) - 1u), (v))
/* RB * KC accumulators + RB row registers + 1 broadcast fit the 32 registers */
#define DOT_CHUNKS(KC) ((KC) <= 2 ? 8 : (KC) <= 4 ? 6 : 4)
#define AXPY_CHUNKS 4
/* row-major products two rows per vector: pairs of rows per block for KC columns, RB * KC
 * accumulators + RB row pairs + 1 parameter vector in the 32 registers */
#define ROW_DOT_PAIRS(KC) ((KC) <= 2 ? 8 : (KC) == 3 ? 7 : (KC) == 4 ? 5 : 4)
#include "_gd_kernel_simd.h"

#endif

/* Lanes of the kernel that mpdp_gd_run uses with `isa` (0: the best this CPU has, 1: AVX2,
 * 2: AVX-512): 16 or 8, or 0 when the CPU lacks it. The transposed tiles must be a multiple
 * of this many rows. */
int mpdp_gd_lanes(int isa) {
    if ((isa == 0 || isa == 2) && mpdp_gd_supported_avx512()) return 16;
    if ((isa == 0 || isa == 1) && mpdp_gd_supported()) return 8;
    return 0;
}

/* Run `steps` steps (see the top of this file) with the kernel of `isa` (see mpdp_gd_lanes).
 * Returns MPDP_OK, MPDP_NO_MEMORY when a work buffer cannot be allocated (nothing is leaked,
 * theta is unchanged), MPDP_UNSUPPORTED when the CPU lacks the instruction set or the shapes
 * are not supported (P not a positive multiple of 8 or p > P, tile_rows < 1 or, with Xt, not a
 * multiple of the lanes, n, p or K < 1); mpdp.fused_kernel maps them to errors. */
int mpdp_gd_run(int isa, const float *X, const float *Xt, long n, long p, long P, float *theta,
                long K, const float *coef, int per_row, const float *decay, const float *linear,
                const float *noise, long steps, long tile_rows) {
    int lanes = mpdp_gd_lanes(isa);
    if (lanes == 0 || P < 8 || P % 8 != 0 || p < 1 || p > P || n < 1 || K < 1 || tile_rows < 1 ||
        (Xt && tile_rows % lanes != 0))
        return MPDP_UNSUPPORTED;
#if MPDP_X86
    /* Subnormal inputs and results count as zero while the kernel runs (MXCSR DAZ and FTZ,
     * restored on return): a run with large noise meets far-off margins whose coefficients
     * c / (1 + exp(z)) fall below 1.2e-38, and on Intel CPUs every subnormal operand costs a
     * microcode assist (measured on an Intel Xeon: the small party blocks of an Adult u-sweep
     * at eps = 0.01 ran at 45 GFLOP/s, 120 with the flush; the job's table did not change).
     * The flushed terms are below 1.2e-38 each. */
    unsigned int csr = _mm_getcsr();
    _mm_setcsr(csr | 0x8040u);
    int status = lanes == 16
        ? run_avx512(X, Xt, n, p, P, theta, K, coef, per_row, decay, linear, noise, steps, tile_rows)
        : run_avx2(X, Xt, n, p, P, theta, K, coef, per_row, decay, linear, noise, steps, tile_rows);
    _mm_setcsr(csr);
    return status;
#else
    (void)X; (void)Xt; (void)theta; (void)coef; (void)per_row; (void)decay; (void)linear;
    (void)noise; (void)steps;
    return MPDP_UNSUPPORTED;
#endif
}
