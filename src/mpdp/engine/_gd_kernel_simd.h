/*
 * The fused step kernel for one x86-64 vector instruction set (see _gd_kernel.c, which includes
 * this file once per set). The including file defines
 *     VF, W                  the float vector type and its lanes (8 for AVX2, 16 for AVX-512)
 *     FN(name)               the name with the set's suffix; TGT / ITGT the function attributes
 *     V_LOAD, V_STORE, V_SET1, V_ZERO, V_BCAST, V_ADD, V_SUB, V_MUL, V_DIV, V_MIN, V_MAX,
 *     V_FMADD, V_FNMADD, V_FMSUB, V_ROUND (to nearest), V_POW2I (2^n for integral n),
 *     V_LOAD_N / V_STORE_N   the first n < W lanes only (no access past them)
 *     DOT_CHUNKS(KC)         chunks of W rows per transposed dot block for KC columns
 *     ROW_DOT_ROWS(KC)       rows per row-major dot block, or ROW_DOT_PAIRS(KC) pairs of rows
 *                            per block of two rows in each 512-bit vector
 *     AXPY_CHUNKS            chunks of W features per gradient block
 * Every float operation on a given row, feature and column is the same in every set and its
 * order depends only on the rows and features (products in feature order, the gradient in row
 * order, the same polynomial): the sets differ in how many rows or features share one
 * instruction, so their results are bit-identical (tests/engine/test_fused_kernel.py).
 */

#ifndef MPDP_DISPATCH_8X6
#define MPDP_DISPATCH_8X6
/* switch (n, kc) for n in 1..LIMIT(kc) (at most 8) and kc in 1..6 to CALL(n, kc) with both as
 * constants, so that every block shape is a function of its own with its accumulators in
 * registers. Only those reachable shapes are compiled: a case past LIMIT(kc) has a constant
 * false guard, which the compiler folds away before it instantiates the call. */
#define MPDP_CASE(CALL, LIMIT, N, KC) \
    case (N) * 8 + (KC): (N) <= LIMIT(KC) ? CALL(N, KC) : (void)0; break;
#define MPDP_CASES_KC(CALL, LIMIT, N) MPDP_CASE(CALL, LIMIT, N, 1) MPDP_CASE(CALL, LIMIT, N, 2) \
    MPDP_CASE(CALL, LIMIT, N, 3) MPDP_CASE(CALL, LIMIT, N, 4) MPDP_CASE(CALL, LIMIT, N, 5) \
    MPDP_CASE(CALL, LIMIT, N, 6)
#define MPDP_SWITCH_8X6(n, kc, CALL, LIMIT) switch ((n) * 8 + (kc)) { \
    MPDP_CASES_KC(CALL, LIMIT, 1) MPDP_CASES_KC(CALL, LIMIT, 2) MPDP_CASES_KC(CALL, LIMIT, 3) \
    MPDP_CASES_KC(CALL, LIMIT, 4) MPDP_CASES_KC(CALL, LIMIT, 5) MPDP_CASES_KC(CALL, LIMIT, 6) \
    MPDP_CASES_KC(CALL, LIMIT, 7) MPDP_CASES_KC(CALL, LIMIT, 8) }
#define MPDP_ONE(KC) 1
#endif

/* exp(x) for W floats: Cephes expf's range reduction and polynomial (relative error about
 * 2e-7 on [-87, 88]); inputs are clamped to that range, where 1 / (1 + exp(x)) is 1 or 0 to
 * float precision anyway. */
ITGT VF FN(expv)(VF x) {
    x = V_MIN(V_MAX(x, V_SET1(-87.0f)), V_SET1(88.0f));
    VF n = V_ROUND(V_MUL(x, V_SET1(1.44269504088896341f)));
    VF r = V_FNMADD(n, V_SET1(0.693359375f), x);
    r = V_FNMADD(n, V_SET1(-2.12194440e-4f), r);
    VF y = V_SET1(1.9875691500e-4f);
    y = V_FMADD(y, r, V_SET1(1.3981999507e-3f));
    y = V_FMADD(y, r, V_SET1(8.3334519073e-3f));
    y = V_FMADD(y, r, V_SET1(4.1665795894e-2f));
    y = V_FMADD(y, r, V_SET1(1.6666665459e-1f));
    y = V_FMADD(y, r, V_SET1(5.0000001201e-1f));
    y = V_FMADD(y, V_MUL(r, r), V_ADD(r, V_SET1(1.0f)));
    return V_MUL(y, V_POW2I(n));
}

/* c / (1 + exp(z)) for W floats. */
ITGT VF FN(coefficient)(VF c, VF z) { return V_DIV(c, V_ADD(V_SET1(1.0f), FN(expv)(z))); }

/* zt[k*R + W*b + l] = xt[:, W*b + l] . theta_k for RB chunks of W rows (lanes) and KC columns,
 * from the transposed tile xt (p x R): each lane adds its row's p products in feature order. */
ITGT void FN(dot_block)(const float *xt, const float *theta, float *zt, long p, long P, long R,
                        int RB, int KC) {
    VF acc[8][6];
    for (int b = 0; b < RB; b++)
        for (int k = 0; k < KC; k++) acc[b][k] = V_ZERO();
    for (long j = 0; j < p; j++) {
        VF xv[8];
        for (int b = 0; b < RB; b++) xv[b] = V_LOAD(xt + j * R + W * b);
        for (int k = 0; k < KC; k++) {
            VF t = V_BCAST(theta + k * P + j);
            for (int b = 0; b < RB; b++) acc[b][k] = V_FMADD(xv[b], t, acc[b][k]);
        }
    }
    for (int b = 0; b < RB; b++)
        for (int k = 0; k < KC; k++) V_STORE(zt + k * R + W * b, acc[b][k]);
}

/* Sum of the 8 lanes of each of a, b, c, d, as one 4-lane vector (a, b, c, d). */
ITGT __m128 FN(hsum4)(__m256 a, __m256 b, __m256 c, __m256 d) {
    __m256 ab = _mm256_hadd_ps(a, b);
    __m256 cd = _mm256_hadd_ps(c, d);
    __m256 abcd = _mm256_hadd_ps(ab, cd);
    return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

/* z[r*K + k] = x_r . theta_k for RC rows of the row-major tile x and KC columns: 8 partial
 * sums per product (features j mod 8) in the 8 lanes of a 256-bit vector in every set, added
 * by a fixed tree at the end. */
ITGT void FN(row_dot_block)(const float *x, const float *theta, float *z, long P, long K, int RC,
                            int KC) {
    __m256 acc[8][8];
    for (int r = 0; r < RC; r++)
        for (int k = 0; k < KC; k++) acc[r][k] = _mm256_setzero_ps();
    for (long j = 0; j < P; j += 8) {
        __m256 xr[8];
        for (int r = 0; r < RC; r++) xr[r] = _mm256_loadu_ps(x + r * P + j);
        for (int k = 0; k < KC; k++) {
            __m256 t = _mm256_loadu_ps(theta + k * P + j);
            for (int r = 0; r < RC; r++) acc[r][k] = _mm256_fmadd_ps(xr[r], t, acc[r][k]);
        }
    }
    for (int r = 0; r < RC; r++) {
        for (int k = KC; k < 8; k++) acc[r][k] = _mm256_setzero_ps();
        float out[8];
        _mm_storeu_ps(out, FN(hsum4)(acc[r][0], acc[r][1], acc[r][2], acc[r][3]));
        if (KC > 4) _mm_storeu_ps(out + 4, FN(hsum4)(acc[r][4], acc[r][5], acc[r][6], acc[r][7]));
        for (int k = 0; k < KC; k++) z[r * K + k] = out[k];
    }
}

/* g[k*P + j] += sum_r s[r*rs + k*ks] x[r*P + j] over `rows` rows, for KC columns (<= 6) and JC
 * chunks of W features (<= 4) starting at feature j0; the last chunk has `last` < W features
 * when TAIL. */
ITGT void FN(axpy_block)(const float *x, const float *s, float *g, long rows, long P, long rs,
                         long ks, long j0, int KC, int JC, int TAIL, int last) {
    VF acc[6][4];
    const int full = TAIL ? JC - 1 : JC;
    for (int k = 0; k < KC; k++) {
        for (int c = 0; c < full; c++) acc[k][c] = V_LOAD(g + k * P + j0 + W * c);
        if (TAIL) acc[k][full] = V_LOAD_N(g + k * P + j0 + W * full, last);
    }
    for (long r = 0; r < rows; r++) {
        VF xc[4];
        for (int c = 0; c < full; c++) xc[c] = V_LOAD(x + r * P + j0 + W * c);
        if (TAIL) xc[full] = V_LOAD_N(x + r * P + j0 + W * full, last);
        for (int k = 0; k < KC; k++) {
            VF b = V_BCAST(s + r * rs + k * ks);
            for (int c = 0; c < JC; c++) acc[k][c] = V_FMADD(b, xc[c], acc[k][c]);
        }
    }
    for (int k = 0; k < KC; k++) {
        for (int c = 0; c < full; c++) V_STORE(g + k * P + j0 + W * c, acc[k][c]);
        if (TAIL) V_STORE_N(g + k * P + j0 + W * full, acc[k][full], last);
    }
}

/* zt (K x R) = theta xt for the first `chunks` chunks of W rows of the transposed tile xt
 * (p x R), by column groups and blocks of DOT_CHUNKS chunks. */
TGT static void FN(tile_dots)(const float *xt, const float *theta, float *zt, long chunks, long R,
                              long p, long P, long K) {
    for (long k0 = 0; k0 < K;) {
        int kc = group_size(K, k0);
        int per_block = DOT_CHUNKS(kc);
        const float *t = theta + k0 * P;
        float *zz = zt + k0 * R;
        for (long c0 = 0; c0 < chunks; c0 += per_block) {
            int rb = chunks - c0 < per_block ? (int)(chunks - c0) : per_block;
#define DOT_CALL(RB, KC) FN(dot_block)(xt + W * c0, t, zz + W * c0, p, P, R, RB, KC)
            MPDP_SWITCH_8X6(rb, kc, DOT_CALL, DOT_CHUNKS)
#undef DOT_CALL
        }
        k0 += kc;
    }
}

#ifdef ROW_DOT_PAIRS
/* Pairs of adjacent lanes added: lanes 0-7 are a's (0+1, 2+3, ..., 14+15), lanes 8-15 b's. */
ITGT __m512 FN(pair_sums)(__m512 a, __m512 b) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    return _mm512_add_ps(_mm512_permutex2var_ps(a, even, b), _mm512_permutex2var_ps(a, odd, b));
}

/* The row-major products of 2 * RB rows, two rows per 512-bit vector: lanes 0-7 hold row r's
 * features j..j+7 and lanes 8-15 row r+1's, against theta2 (theta's chunks of 8 features, each
 * twice). Every lane adds the same terms in the same order as in row_dot_block, and the 8
 * partial sums of each product are finished by the same tree as hsum4's,
 * ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), so the two give bit-identical products.
 * The tree runs on 8 accumulators at once, three levels of pair_sums giving one vector of their
 * 16 products (lane 2q + h: accumulator q's row h): 7 additions and 14 permutations per 16
 * products instead of about 70 instructions, most on the port that also does FMAs. */
ITGT void FN(row_pair_dot_block)(const float *x, const float *theta2, float *z, long P, long K,
                                 int RB, int KC) {
    __m512 acc[8][6];
    for (int b = 0; b < RB; b++)
        for (int k = 0; k < KC; k++) acc[b][k] = _mm512_setzero_ps();
    for (long j = 0; j < P; j += 8) {
        __m512 xp[8];
        for (int b = 0; b < RB; b++) {
            __m512d lo = _mm512_castps_pd(_mm512_castps256_ps512(_mm256_loadu_ps(x + 2 * b * P + j)));
            __m256d hi = _mm256_castps_pd(_mm256_loadu_ps(x + (2 * b + 1) * P + j));
            xp[b] = _mm512_castpd_ps(_mm512_insertf64x4(lo, hi, 1));
        }
        for (int k = 0; k < KC; k++) {
            __m512 t = _mm512_loadu_ps(theta2 + 2 * (k * P + j));
            for (int b = 0; b < RB; b++) acc[b][k] = _mm512_fmadd_ps(xp[b], t, acc[b][k]);
        }
    }
    float out[48] __attribute__((aligned(64)));  /* accumulator q = b * KC + k: out[2q + h] */
    for (int g = 0; 8 * g < RB * KC; g++) {
        __m512 v[8];
        for (int i = 0; i < 8; i++) {
            int q = 8 * g + i;
            v[i] = q < RB * KC ? acc[q / KC][q % KC] : _mm512_setzero_ps();
        }
        __m512 lo = FN(pair_sums)(FN(pair_sums)(v[0], v[1]), FN(pair_sums)(v[2], v[3]));
        __m512 hi = FN(pair_sums)(FN(pair_sums)(v[4], v[5]), FN(pair_sums)(v[6], v[7]));
        _mm512_store_ps(out + 16 * g, FN(pair_sums)(lo, hi));
    }
    for (int b = 0; b < RB; b++)
        for (int k = 0; k < KC; k++) {
            z[2 * b * K + k] = out[2 * (b * KC + k)];
            z[(2 * b + 1) * K + k] = out[2 * (b * KC + k) + 1];
        }
}

/* theta2 (K x 2P): every chunk of 8 features of theta twice in a row (see row_pair_dot_block). */
TGT static void FN(duplicate_chunks)(const float *theta, float *theta2, long K, long P) {
    for (long i = 0; i < K * P; i += 8) {
        __m256 v = _mm256_loadu_ps(theta + i);
        _mm256_storeu_ps(theta2 + 2 * i, v);
        _mm256_storeu_ps(theta2 + 2 * i + 8, v);
    }
}

/* z (rows x K) = X_tile theta^T for the `rows` rows of the row-major tile X, by column groups
 * and blocks of ROW_DOT_PAIRS(KC) pairs of rows (an odd last row alone). */
TGT static void FN(tile_row_dots)(const float *X, const float *theta, const float *theta2, float *z,
                                  long rows, long P, long K) {
    for (long k0 = 0; k0 < K;) {
        int kc = group_size(K, k0);
        int per_block = ROW_DOT_PAIRS(kc);
        const float *t = theta + k0 * P, *t2 = theta2 + 2 * k0 * P;
        float *zz = z + k0;
        for (long r0 = 0; r0 < rows;) {
            long pairs = (rows - r0) / 2;
            if (pairs == 0) {
#define ROW_CALL(RC, KC) FN(row_dot_block)(X + r0 * P, t, zz + r0 * K, P, K, RC, KC)
                switch (8 + kc) { MPDP_CASES_KC(ROW_CALL, MPDP_ONE, 1) }
#undef ROW_CALL
                r0 += 1;
                continue;
            }
            int rb = pairs < per_block ? (int)pairs : per_block;
#define PAIR_CALL(RB, KC) FN(row_pair_dot_block)(X + r0 * P, t2, zz + r0 * K, P, K, RB, KC)
            MPDP_SWITCH_8X6(rb, kc, PAIR_CALL, ROW_DOT_PAIRS)
#undef PAIR_CALL
            r0 += 2 * rb;
        }
        k0 += kc;
    }
}
#else
/* z (rows x K) = X_tile theta^T for the `rows` rows of the row-major tile X, by column groups
 * and blocks of ROW_DOT_ROWS rows (theta2 unused). */
TGT static void FN(tile_row_dots)(const float *X, const float *theta, const float *theta2, float *z,
                                  long rows, long P, long K) {
    (void)theta2;
    for (long k0 = 0; k0 < K;) {
        int kc = group_size(K, k0);
        int per_block = ROW_DOT_ROWS(kc);
        const float *t = theta + k0 * P;
        float *zz = z + k0;
        for (long r0 = 0; r0 < rows; r0 += per_block) {
            int rc = rows - r0 < per_block ? (int)(rows - r0) : per_block;
#define ROW_CALL(RC, KC) FN(row_dot_block)(X + r0 * P, t, zz + r0 * K, P, K, RC, KC)
            MPDP_SWITCH_8X6(rc, kc, ROW_CALL, ROW_DOT_ROWS)
#undef ROW_CALL
        }
        k0 += kc;
    }
}
#endif

/* g (K x P) += s^T X_tile (s[r*rs + k*ks]: K x R with rs = 1, ks = R, or rows x K with rs = K,
 * ks = 1; the tile's `rows` rows of X), by column groups and blocks of AXPY_CHUNKS chunks of
 * W features. */
TGT static void FN(tile_axpys)(const float *X, const float *s_tile, float *g_all, long rows,
                               long rs, long ks, long P, long K) {
    for (long k0 = 0; k0 < K;) {
        int kc = group_size(K, k0);
        const float *s = s_tile + k0 * ks;
        float *g = g_all + k0 * P;
        for (long j0 = 0; j0 < P; j0 += W * AXPY_CHUNKS) {
            long left = P - j0;
            int jc = left >= W * AXPY_CHUNKS ? AXPY_CHUNKS : (int)((left + W - 1) / W);
            int last = (int)(left - (long)W * (jc - 1));
            int tail = last < W;
#define AXPY_CASE(KC, JC, T) case ((KC) * 8 + (JC)) * 2 + (T): \
    (JC) <= AXPY_CHUNKS ? FN(axpy_block)(X, s, g, rows, P, rs, ks, j0, KC, JC, T, last) : (void)0; \
    break;
#define AXPY_CASES(KC) AXPY_CASE(KC, 1, 0) AXPY_CASE(KC, 2, 0) AXPY_CASE(KC, 3, 0) \
    AXPY_CASE(KC, 4, 0) AXPY_CASE(KC, 1, 1) AXPY_CASE(KC, 2, 1) AXPY_CASE(KC, 3, 1) \
    AXPY_CASE(KC, 4, 1)
            switch ((kc * 8 + jc) * 2 + tail) {
                AXPY_CASES(1) AXPY_CASES(2) AXPY_CASES(3) AXPY_CASES(4) AXPY_CASES(5)
                AXPY_CASES(6)
            }
#undef AXPY_CASES
#undef AXPY_CASE
        }
        k0 += kc;
    }
}

/* s[i] = c[i] / (1 + exp(z[i])) for i < count, in place in z (tiles in rows x K layout). */
TGT static void FN(row_coefficients)(float *z, const float *c, long count) {
    long i = 0;
    for (; i + W <= count; i += W) V_STORE(z + i, FN(coefficient)(V_LOAD(c + i), V_LOAD(z + i)));
    if (i < count) {
        int rest = (int)(count - i);
        V_STORE_N(z + i, FN(coefficient)(V_LOAD_N(c + i, rest), V_LOAD_N(z + i, rest)), rest);
    }
}

/* zt[k*R + r] <- c_k(r) / (1 + exp(zt[k*R + r])) for r < W * chunks, with c_k(r) = c[k] or,
 * per row, c[k*R + r] (the tile's K x R block of coefficients). */
TGT static void FN(coefficients)(float *zt, long chunks, long R, long K, const float *c,
                                 int per_row) {
    for (long k = 0; k < K; k++) {
        float *z = zt + k * R;
        VF ck = V_SET1(per_row ? 0.0f : c[k]);
        for (long i = 0; i < W * chunks; i += W)
            V_STORE(z + i, FN(coefficient)(per_row ? V_LOAD(c + k * R + i) : ck, V_LOAD(z + i)));
    }
}

/* theta_k <- decay_k theta_k - g_k - linear_k - noise_k for every column k. */
TGT static void FN(update)(float *theta, const float *g, const float *decay, const float *linear,
                           const float *noise, long K, long P) {
    for (long k = 0; k < K; k++) {
        VF d = V_SET1(decay[k]);
        float *th = theta + k * P;
        const float *gk = g + k * P, *nk = noise + k * P;
        const float *lk = linear ? linear + k * P : NULL;
        long j = 0;
        for (; j + W <= P; j += W) {
            VF v = V_FMSUB(d, V_LOAD(th + j), V_LOAD(gk + j));
            if (lk) v = V_SUB(v, V_LOAD(lk + j));
            V_STORE(th + j, V_SUB(v, V_LOAD(nk + j)));
        }
        if (j < P) {
            int rest = (int)(P - j);
            VF v = V_FMSUB(d, V_LOAD_N(th + j, rest), V_LOAD_N(gk + j, rest));
            if (lk) v = V_SUB(v, V_LOAD_N(lk + j, rest));
            V_STORE_N(th + j, V_SUB(v, V_LOAD_N(nk + j, rest)), rest);
        }
    }
}

/* `steps` steps (see the top of _gd_kernel.c); the shapes are checked by the caller. */
TGT static int FN(run)(const float *X, const float *Xt, long n, long p, long P, float *theta,
                       long K, const float *coef, int per_row, const float *decay,
                       const float *linear, const float *noise, long steps, long tile_rows) {
    float *g = aligned_alloc(64, (size_t)((K * P * sizeof(float) + 63) / 64 * 64));
    float *z = aligned_alloc(64, (size_t)((tile_rows * K * sizeof(float) + 63) / 64 * 64));
    float *theta2 = NULL;  /* row-major tiles with ROW_DOT_PAIRS: theta's chunks twice */
    int need_theta2 = 0;
#ifdef ROW_DOT_PAIRS
    need_theta2 = !Xt;
    if (need_theta2)
        theta2 = aligned_alloc(64, (size_t)((2 * K * P * sizeof(float) + 63) / 64 * 64));
#endif
    float *pattern = NULL;  /* row-major tiles, same weights for every row: coef per row */
    if (!Xt && !per_row)
        pattern = aligned_alloc(64, (size_t)((tile_rows * K * sizeof(float) + 63) / 64 * 64));
    if (!g || !z || (need_theta2 && !theta2) || (!Xt && !per_row && !pattern)) {
        /* every buffer that was allocated is freed (free(NULL) does nothing) */
        free(g); free(z); free(pattern); free(theta2);
        return MPDP_NO_MEMORY;
    }
    memset(z, 0, (size_t)(tile_rows * K) * sizeof(float));  /* rows past n stay finite */
    if (pattern)
        for (long r = 0; r < tile_rows; r++) memcpy(pattern + r * K, coef, (size_t)K * sizeof(float));
    for (long t = 0; t < steps; t++) {
        memset(g, 0, (size_t)(K * P) * sizeof(float));
#ifdef ROW_DOT_PAIRS
        if (theta2) FN(duplicate_chunks)(theta, theta2, K, P);
#endif
        for (long a = 0; a < n; a += tile_rows) {
            long rows = n - a < tile_rows ? n - a : tile_rows;
            const float *x = X + a * P;
            if (Xt) {  /* transposed tile: z is K x tile_rows */
                long chunks = (rows + W - 1) / W;
                FN(tile_dots)(Xt + a * p, theta, z, chunks, tile_rows, p, P, K);
                FN(coefficients)(z, chunks, tile_rows, K, per_row ? coef + a * K : coef, per_row);
                FN(tile_axpys)(x, z, g, rows, 1, tile_rows, P, K);
            } else {  /* row-major tile: z is rows x K */
                FN(tile_row_dots)(x, theta, theta2, z, rows, P, K);
                FN(row_coefficients)(z, per_row ? coef + a * K : pattern, rows * K);
                FN(tile_axpys)(x, z, g, rows, K, 1, P, K);
            }
        }
        FN(update)(theta, g, decay, linear, noise + t * K * P, K, P);
    }
    free(g); free(z); free(pattern); free(theta2);
    return MPDP_OK;
}
