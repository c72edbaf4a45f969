/*
 * Standard normal draws of NumPy's Generator(PCG64(seed)).standard_normal, bit for bit, for
 * the fused engine's noise (spec M2, M3.1: z_{k,t} ~ N(0, I_p) is the t-th p-vector of column
 * k's stream; issue 12). Loaded with ctypes by mpdp.normal_stream, which checks every load
 * against NumPy itself and otherwise draws with NumPy.
 *
 * The same algorithm as NumPy's: PCG64 (128-bit LCG, XSL-RR output) and the 256-layer
 * ziggurat of Marsaglia and Tsang, with NumPy's tables (_ziggurat_tables.h). It is about four times
 * faster than NumPy's loop because the generator step is inlined and the sign is applied
 * without a branch; the values and the order in which the stream is consumed are the same,
 * including the rare tail and wedge paths (log1p and exp of the C library, as NumPy).
 *
 * Only x86-64, the fused engine's platform, builds it (elsewhere the functions return -2).
 * Every operation must round as NumPy's does: the library is compiled with -ffp-contract=off
 * (pyproject.toml / setup.py), so that no multiply and add is fused into one FMA.
 */
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__SIZEOF_INT128__)
#include <math.h>

#include "_ziggurat_tables.h"

typedef unsigned __int128 u128;

#define PCG_MULTIPLIER (((u128)0x2360ED051FC65DA4ULL << 64) | 0x4385DF649FCCF645ULL)
#define ZIGGURAT_R 3.6541528853610087963519472518
#define ZIGGURAT_INV_R 0.27366123732975827203338247596
#define MANTISSA_MASK 0x000fffffffffffffULL

typedef struct {
    u128 state;
    u128 inc;
} pcg64;

static inline uint64_t next_u64(pcg64 *g) {
    g->state = g->state * PCG_MULTIPLIER + g->inc;
    uint64_t folded = (uint64_t)(g->state >> 64) ^ (uint64_t)g->state;
    unsigned rot = (unsigned)(g->state >> 122);
    return (folded >> rot) | (folded << ((-rot) & 63));
}

static inline double next_unit(pcg64 *g) {
    return (double)(next_u64(g) >> 11) * (1.0 / 9007199254740992.0);
}

/* The ziggurat's rare paths: x from layer idx was not inside the layer's rectangle (idx 0: the
 * base strip, whose tail beyond R is sampled by Marsaglia's method). Retries draw afresh. */
static double normal_slow(pcg64 *g, uint64_t rabs, int idx, double x) {
    for (;;) {
        if (idx == 0) {
            for (;;) {
                double xx = -ZIGGURAT_INV_R * log1p(-next_unit(g));
                double yy = -log1p(-next_unit(g));
                if (yy + yy > xx * xx)
                    return ((rabs >> 8) & 1) ? -(ZIGGURAT_R + xx) : ZIGGURAT_R + xx;
            }
        }
        if ((ZIGGURAT_FI[idx - 1] - ZIGGURAT_FI[idx]) * next_unit(g) + ZIGGURAT_FI[idx] < exp(-0.5 * x * x))
            return x;
        uint64_t r = next_u64(g);
        idx = (int)(r & 0xff);
        r >>= 8;
        rabs = (r >> 1) & MANTISSA_MASK;
        x = (double)rabs * ZIGGURAT_WI[idx];
        if (r & 1) x = -x;
        if (rabs < ZIGGURAT_KI[idx]) return x;
    }
}

static inline double next_normal(pcg64 *g) {
    uint64_t r = next_u64(g);
    int idx = (int)(r & 0xff);
    r >>= 8;
    uint64_t rabs = (r >> 1) & MANTISSA_MASK;
    double x = (double)(int64_t)rabs * ZIGGURAT_WI[idx];
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    bits ^= (r & 1) << 63; /* the sign, without a branch: negation flips only the sign bit */
    memcpy(&x, &bits, sizeof x);
    if (__builtin_expect(rabs >= ZIGGURAT_KI[idx], 0)) x = normal_slow(g, rabs, idx, x);
    return x;
}

static inline pcg64 load_state(const uint64_t *words) {
    pcg64 g;
    g.state = ((u128)words[0] << 64) | words[1];
    g.inc = ((u128)words[2] << 64) | words[3];
    return g;
}

static inline void store_state(uint64_t *words, const pcg64 *g) {
    words[0] = (uint64_t)(g->state >> 64);
    words[1] = (uint64_t)g->state;
}

/* Copies of the tables (256 entries each), for the tests. Returns 0. */
int mpdp_normal_tables(uint64_t *ki, double *wi, double *fi) {
    memcpy(ki, ZIGGURAT_KI, sizeof ZIGGURAT_KI);
    memcpy(wi, ZIGGURAT_WI, sizeof ZIGGURAT_WI);
    memcpy(fi, ZIGGURAT_FI, sizeof ZIGGURAT_FI);
    return 0;
}

/* `count` draws of one stream into out. state: 4 words (state high, low, increment high,
 * low), advanced in place. Returns 0. */
int mpdp_normal_fill(uint64_t *state, long count, double *out) {
    pcg64 g = load_state(state);
    for (long i = 0; i < count; i++) out[i] = next_normal(&g);
    store_state(state, &g);
    return 0;
}

/* For each of K streams (states: K x 4 words, advanced in place), `steps` vectors of p draws,
 * each multiplied by the stream's scale in double and rounded to float32:
 *     out[t * K * P + k * P + i] = (float)(z_{k, t p + i} * scale[k]),  i < p
 * (the engine's steps x K x P noise buffer; columns p..P-1 are left as they are). Returns 0. */
int mpdp_normal_fill_scaled(uint64_t *states, long K, long steps, long p, long P,
                            const double *scale, float *out) {
    for (long k = 0; k < K; k++) {
        pcg64 g = load_state(states + 4 * k);
        const double s = scale[k];
        for (long t = 0; t < steps; t++) {
            float *row = out + (t * K + k) * P;
            for (long i = 0; i < p; i++) row[i] = (float)(next_normal(&g) * s);
        }
        store_state(states + 4 * k, &g);
    }
    return 0;
}

#else

int mpdp_normal_tables(uint64_t *ki, double *wi, double *fi) {
    (void)ki; (void)wi; (void)fi;
    return -2;
}

int mpdp_normal_fill(uint64_t *state, long count, double *out) {
    (void)state; (void)count; (void)out;
    return -2;
}

int mpdp_normal_fill_scaled(uint64_t *states, long K, long steps, long p, long P,
                            const double *scale, float *out) {
    (void)states; (void)K; (void)steps; (void)p; (void)P; (void)scale; (void)out;
    return -2;
}

#endif
