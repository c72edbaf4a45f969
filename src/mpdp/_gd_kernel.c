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
 * gradient (a column group x 2 chunks of 8 features), while the tile is in the L1 cache: the
 * two matrix products of the NumPy path and its three elementwise passes, in one pass over
 * the rows. The products come, for a block small enough to keep a second copy in cache, from
 * a transposed copy of its tiles (rows in the 8 lanes, a broadcast parameter per feature and
 * column: each product is added in feature order, no horizontal sums); for a larger block
 * (Xt NULL: a second copy would double its memory traffic) from the row-major tile (8 partial
 * sums per product, features j mod 8, added by a fixed tree). Layouts (float32, row-major):
 *     X      n x P   (P a multiple of 8 and >= p; the padding columns are zero)
 *     Xt     NULL, or the tiles of X transposed: the tile starting at row a (a multiple of
 *            tile_rows, which must then be a multiple of 8) is the p x tile_rows array at
 *            Xt + a * p, rows past n zero
 *     theta  K x P   (padding columns zero, and kept zero when linear and noise pad with zeros)
 *     coef   per_row with Xt: tile by tile like Xt, the tile starting at row a is the
 *            K x tile_rows array at coef + a * K (rows past n zero); per_row without Xt:
 *            n x K; else K values (the same for every row)
 *     decay  K, linear K x P or NULL, noise steps x K x P.
 * The gradient is added in row order per feature. The order of every addition depends only on
 * the rows, the features, tile_rows and whether Xt is given, never on the other columns: a
 * column's result is the same alone or in any batch that gives it the same kind of block.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MPDP_X86 1
#define AVX2 __attribute__((target("avx2,fma")))
#define INLINE_AVX2 static inline __attribute__((always_inline, target("avx2,fma")))
#else
#define MPDP_X86 0
#endif

/* 1 when this library's kernel can run on this CPU (x86-64 with AVX2 and FMA), else 0. */
int mpdp_gd_supported(void) {
#if MPDP_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

#if MPDP_X86

/* exp(x) for 8 floats: Cephes expf's range reduction and polynomial (relative error about
 * 2e-7 on [-87, 88]); inputs are clamped to that range, where 1 / (1 + exp(x)) is 1 or 0 to
 * float precision anyway. */
INLINE_AVX2 __m256 exp8(__m256 x) {
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 y = _mm256_set1_ps(1.9875691500e-4f);
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
    y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

/* Width of the column group starting at k0: groups of 4 columns, except that the last 3 to 6
 * columns form one group (K = 6 is one group of 6, not 4 + 2: a group of 2 columns has too few
 * independent accumulators to keep the FMA units busy). */
static inline int group_size(long K, long k0) {
    long left = K - k0;
    return left <= 6 ? (int)left : 4;
}

/* Chunks of 8 rows per dot block for a group of KC columns: RB * KC accumulators + RB row
 * registers + 1 broadcast fit the 16 AVX2 registers. */
#define DOT_CHUNKS(KC) ((KC) <= 2 ? 4 : (KC) <= 4 ? 3 : 2)

/* zt[k*R + 8b + l] = xt[:, 8b + l] . theta_k for RB chunks of 8 rows (lanes) and KC columns,
 * from the transposed tile xt (p x R): each lane adds its row's p products in feature order,
 * so the sum does not depend on the other rows or columns. */
INLINE_AVX2 void dot_block(const float *xt, const float *theta, float *zt, long p, long P, long R,
                           int RB, int KC) {
    __m256 acc[4][6];
    for (int b = 0; b < RB; b++)
        for (int k = 0; k < KC; k++) acc[b][k] = _mm256_setzero_ps();
    for (long j = 0; j < p; j++) {
        __m256 xv[4];
        for (int b = 0; b < RB; b++) xv[b] = _mm256_loadu_ps(xt + j * R + 8 * b);
        for (int k = 0; k < KC; k++) {
            __m256 t = _mm256_broadcast_ss(theta + k * P + j);
            for (int b = 0; b < RB; b++) acc[b][k] = _mm256_fmadd_ps(xv[b], t, acc[b][k]);
        }
    }
    for (int b = 0; b < RB; b++)
        for (int k = 0; k < KC; k++) _mm256_storeu_ps(zt + k * R + 8 * b, acc[b][k]);
}

/* Sum of the 8 lanes of each of a, b, c, d, as one 4-lane vector (a, b, c, d). */
INLINE_AVX2 __m128 hsum4(__m256 a, __m256 b, __m256 c, __m256 d) {
    __m256 ab = _mm256_hadd_ps(a, b);
    __m256 cd = _mm256_hadd_ps(c, d);
    __m256 abcd = _mm256_hadd_ps(ab, cd);
    return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

/* Rows per row-major dot block for a group of KC columns: RC * KC accumulators + RC row
 * registers + 1 temporary fit the 16 AVX2 registers, with at least 6 independent accumulators
 * where possible. */
#define ROW_DOT_ROWS(KC) ((KC) == 1 ? 6 : (KC) == 2 ? 5 : (KC) <= 4 ? 3 : 2)

/* z[r*K + k] = x_r . theta_k for RC rows of the row-major tile x and KC columns: 8 partial
 * sums per product (features j mod 8) in the lanes, added by a fixed tree at the end. */
INLINE_AVX2 void row_dot_block(const float *x, const float *theta, float *z, long P, long K,
                               int RC, int KC) {
    __m256 acc[6][8];
    for (int r = 0; r < RC; r++)
        for (int k = 0; k < KC; k++) acc[r][k] = _mm256_setzero_ps();
    for (long j = 0; j < P; j += 8) {
        __m256 xr[6];
        for (int r = 0; r < RC; r++) xr[r] = _mm256_loadu_ps(x + r * P + j);
        for (int k = 0; k < KC; k++) {
            __m256 t = _mm256_loadu_ps(theta + k * P + j);
            for (int r = 0; r < RC; r++) acc[r][k] = _mm256_fmadd_ps(xr[r], t, acc[r][k]);
        }
    }
    for (int r = 0; r < RC; r++) {
        for (int k = KC; k < 8; k++) acc[r][k] = _mm256_setzero_ps();
        float out[8];
        _mm_storeu_ps(out, hsum4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]));
        if (KC > 4) _mm_storeu_ps(out + 4, hsum4(acc[r][4], acc[r][5], acc[r][6], acc[r][7]));
        for (int k = 0; k < KC; k++) z[r * K + k] = out[k];
    }
}

/* g[k*P + j] += sum_r s[r*rs + k*ks] x[r*P + j] over `rows` rows, for KC columns (<= 6) and JC
 * chunks of 8 features (<= 2) starting at feature j0. */
INLINE_AVX2 void axpy_block(const float *x, const float *s, float *g, long rows, long P, long rs,
                            long ks, long j0, int KC, int JC) {
    __m256 acc[6][2];
    for (int k = 0; k < KC; k++)
        for (int c = 0; c < JC; c++) acc[k][c] = _mm256_loadu_ps(g + k * P + j0 + 8 * c);
    for (long r = 0; r < rows; r++) {
        __m256 xc[2];
        for (int c = 0; c < JC; c++) xc[c] = _mm256_loadu_ps(x + r * P + j0 + 8 * c);
        for (int k = 0; k < KC; k++) {
            __m256 b = _mm256_broadcast_ss(s + r * rs + k * ks);
            for (int c = 0; c < JC; c++) acc[k][c] = _mm256_fmadd_ps(b, xc[c], acc[k][c]);
        }
    }
    for (int k = 0; k < KC; k++)
        for (int c = 0; c < JC; c++) _mm256_storeu_ps(g + k * P + j0 + 8 * c, acc[k][c]);
}

#define DOT_CASE(RB, KC) case (RB) * 8 + (KC): dot_block(xt + 8 * c0, t, zz + 8 * c0, p, P, R, RB, KC); break;
#define AXPY_CASE(KC, JC) case (KC) * 4 + (JC): axpy_block(X, s, g, rows, P, rs, ks, j0, KC, JC); break;

/* zt (K x R) = theta xt for the first `chunks` chunks of 8 rows of the transposed tile xt
 * (p x R), by column groups and blocks of DOT_CHUNKS chunks. */
AVX2 static void tile_dots(const float *xt, const float *theta, float *zt, long chunks, long R,
                           long p, long P, long K) {
    for (long k0 = 0; k0 < K;) {
        int kc = group_size(K, k0);
        int per_block = DOT_CHUNKS(kc);
        const float *t = theta + k0 * P;
        float *zz = zt + k0 * R;
        for (long c0 = 0; c0 < chunks; c0 += per_block) {
            int rb = chunks - c0 < per_block ? (int)(chunks - c0) : per_block;
            switch (rb * 8 + kc) {
                DOT_CASE(1, 1) DOT_CASE(2, 1) DOT_CASE(3, 1) DOT_CASE(4, 1) DOT_CASE(1, 2)
                DOT_CASE(2, 2) DOT_CASE(3, 2) DOT_CASE(4, 2) DOT_CASE(1, 3) DOT_CASE(2, 3)
                DOT_CASE(3, 3) DOT_CASE(1, 4) DOT_CASE(2, 4) DOT_CASE(3, 4) DOT_CASE(1, 5)
                DOT_CASE(2, 5) DOT_CASE(1, 6) DOT_CASE(2, 6)
            }
        }
        k0 += kc;
    }
}

#define ROW_DOT_CASE(RC, KC) case (RC) * 8 + (KC): row_dot_block(X + r0 * P, t, zz + r0 * K, P, K, RC, KC); break;

/* z (rows x K) = X_tile theta^T for the `rows` rows of the row-major tile X, by column groups
 * and blocks of ROW_DOT_ROWS rows. */
AVX2 static void tile_row_dots(const float *X, const float *theta, float *z, long rows, long P,
                               long K) {
    for (long k0 = 0; k0 < K;) {
        int kc = group_size(K, k0);
        int per_block = ROW_DOT_ROWS(kc);
        const float *t = theta + k0 * P;
        float *zz = z + k0;
        for (long r0 = 0; r0 < rows; r0 += per_block) {
            int rc = rows - r0 < per_block ? (int)(rows - r0) : per_block;
            switch (rc * 8 + kc) {
                ROW_DOT_CASE(1, 1) ROW_DOT_CASE(2, 1) ROW_DOT_CASE(3, 1) ROW_DOT_CASE(4, 1)
                ROW_DOT_CASE(5, 1) ROW_DOT_CASE(6, 1) ROW_DOT_CASE(1, 2) ROW_DOT_CASE(2, 2)
                ROW_DOT_CASE(3, 2) ROW_DOT_CASE(4, 2) ROW_DOT_CASE(5, 2) ROW_DOT_CASE(1, 3)
                ROW_DOT_CASE(2, 3) ROW_DOT_CASE(3, 3) ROW_DOT_CASE(1, 4) ROW_DOT_CASE(2, 4)
                ROW_DOT_CASE(3, 4) ROW_DOT_CASE(1, 5) ROW_DOT_CASE(2, 5) ROW_DOT_CASE(1, 6)
                ROW_DOT_CASE(2, 6)
            }
        }
        k0 += kc;
    }
}

/* g (K x P) += s^T X_tile (s[r*rs + k*ks]: K x R with rs = 1, ks = R, or rows x K with rs = K,
 * ks = 1; the tile's `rows` rows of X), by column groups and blocks of 16 features. */
AVX2 static void tile_axpys(const float *X, const float *s_tile, float *g_all, long rows, long rs,
                            long ks, long P, long K) {
    for (long k0 = 0; k0 < K;) {
        int kc = group_size(K, k0);
        for (long j0 = 0; j0 < P; j0 += 16) {
            int jc = P - j0 < 16 ? 1 : 2;
            const float *s = s_tile + k0 * ks;
            float *g = g_all + k0 * P;
            switch (kc * 4 + jc) {
                AXPY_CASE(1, 1) AXPY_CASE(1, 2) AXPY_CASE(2, 1) AXPY_CASE(2, 2) AXPY_CASE(3, 1)
                AXPY_CASE(3, 2) AXPY_CASE(4, 1) AXPY_CASE(4, 2) AXPY_CASE(5, 1) AXPY_CASE(5, 2)
                AXPY_CASE(6, 1) AXPY_CASE(6, 2)
            }
        }
        k0 += kc;
    }
}

/* s[i] = c[i] / (1 + exp(z[i])) for i < count, in place in z (tiles in rows x K layout). */
AVX2 static void row_coefficients(float *z, const float *c, long count) {
    const __m256 one = _mm256_set1_ps(1.0f);
    long i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256 e = exp8(_mm256_loadu_ps(z + i));
        _mm256_storeu_ps(z + i, _mm256_div_ps(_mm256_loadu_ps(c + i), _mm256_add_ps(one, e)));
    }
    if (i < count) {
        float zt[8] = {0}, ct[8] = {0}, st[8];
        long rest = count - i;
        memcpy(zt, z + i, (size_t)rest * sizeof(float));
        memcpy(ct, c + i, (size_t)rest * sizeof(float));
        _mm256_storeu_ps(st, _mm256_div_ps(_mm256_loadu_ps(ct), _mm256_add_ps(one, exp8(_mm256_loadu_ps(zt)))));
        memcpy(z + i, st, (size_t)rest * sizeof(float));
    }
}

/* zt[k*R + r] <- c_k(r) / (1 + exp(zt[k*R + r])) for r < 8 * chunks, with c_k(r) = c[k] or,
 * per row, c[k*R + r] (the tile's K x R block of coefficients). */
AVX2 static void coefficients(float *zt, long chunks, long R, long K, const float *c,
                              int per_row) {
    const __m256 one = _mm256_set1_ps(1.0f);
    for (long k = 0; k < K; k++) {
        float *z = zt + k * R;
        __m256 ck = _mm256_set1_ps(per_row ? 0.0f : c[k]);
        for (long i = 0; i < 8 * chunks; i += 8) {
            __m256 num = per_row ? _mm256_loadu_ps(c + k * R + i) : ck;
            _mm256_storeu_ps(z + i, _mm256_div_ps(num, _mm256_add_ps(one, exp8(_mm256_loadu_ps(z + i)))));
        }
    }
}

AVX2 static int run(const float *X, const float *Xt, long n, long p, long P, float *theta, long K,
                    const float *coef, int per_row, const float *decay, const float *linear,
                    const float *noise, long steps, long tile_rows) {
    float *g = aligned_alloc(64, (size_t)((K * P * sizeof(float) + 63) / 64 * 64));
    float *z = aligned_alloc(64, (size_t)((tile_rows * K * sizeof(float) + 63) / 64 * 64));
    float *pattern = NULL;  /* row-major tiles, same weights for every row: coef per row */
    if (!Xt && !per_row)
        pattern = aligned_alloc(64, (size_t)((tile_rows * K * sizeof(float) + 63) / 64 * 64));
    if (!g || !z || (!Xt && !per_row && !pattern)) {
        free(g); free(z); free(pattern);
        return -1;
    }
    memset(z, 0, (size_t)(tile_rows * K) * sizeof(float));  /* rows past n stay finite */
    if (pattern)
        for (long r = 0; r < tile_rows; r++) memcpy(pattern + r * K, coef, (size_t)K * sizeof(float));
    for (long t = 0; t < steps; t++) {
        memset(g, 0, (size_t)(K * P) * sizeof(float));
        for (long a = 0; a < n; a += tile_rows) {
            long rows = n - a < tile_rows ? n - a : tile_rows;
            const float *x = X + a * P;
            if (Xt) {  /* transposed tile: z is K x tile_rows */
                long chunks = (rows + 7) / 8;
                tile_dots(Xt + a * p, theta, z, chunks, tile_rows, p, P, K);
                coefficients(z, chunks, tile_rows, K, per_row ? coef + a * K : coef, per_row);
                tile_axpys(x, z, g, rows, 1, tile_rows, P, K);
            } else {  /* row-major tile: z is rows x K */
                tile_row_dots(x, theta, z, rows, P, K);
                row_coefficients(z, per_row ? coef + a * K : pattern, rows * K);
                tile_axpys(x, z, g, rows, K, 1, P, K);
            }
        }
        const float *nz = noise + t * K * P;
        for (long k = 0; k < K; k++) {
            __m256 d = _mm256_set1_ps(decay[k]);
            float *th = theta + k * P;
            const float *gk = g + k * P, *nk = nz + k * P;
            const float *lk = linear ? linear + k * P : NULL;
            for (long j = 0; j < P; j += 8) {
                __m256 v = _mm256_fmsub_ps(d, _mm256_loadu_ps(th + j), _mm256_loadu_ps(gk + j));
                if (lk) v = _mm256_sub_ps(v, _mm256_loadu_ps(lk + j));
                _mm256_storeu_ps(th + j, _mm256_sub_ps(v, _mm256_loadu_ps(nk + j)));
            }
        }
    }
    free(g); free(z); free(pattern);
    return 0;
}
#endif

/* Run `steps` steps (see the top of this file). Returns 0, -1 when memory runs out, -2 when
 * the CPU or the shapes are not supported (P not a positive multiple of 8 or p > P, tile_rows
 * < 1 or, with Xt, not a multiple of 8, n, p or K < 1). */
int mpdp_gd_run(const float *X, const float *Xt, long n, long p, long P, float *theta, long K,
                const float *coef, int per_row, const float *decay, const float *linear,
                const float *noise, long steps, long tile_rows) {
#if MPDP_X86
    if (!mpdp_gd_supported() || P < 8 || P % 8 != 0 || p < 1 || p > P || n < 1 || K < 1 ||
        tile_rows < 1 || (Xt && tile_rows % 8 != 0))
        return -2;
    return run(X, Xt, n, p, P, theta, K, coef, per_row, decay, linear, noise, steps, tile_rows);
#else
    (void)X; (void)Xt; (void)n; (void)p; (void)P; (void)theta; (void)K; (void)coef; (void)per_row;
    (void)decay; (void)linear; (void)noise; (void)steps; (void)tile_rows;
    return -2;
#endif
}
