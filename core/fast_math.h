// exp and expm1 over sixteen floats at a time, in vector arithmetic, for the
// autograd ops' element-wise loops. libm's expf / expm1f are calls, one element
// at a time (glibc declares vector forms only under -ffast-math), and a scalar
// formula with selects does not vectorize either: GCC threads the selects into
// branches. ELU's expm1 over a GAT layer's 22,470 x 64 outputs took 11.5 ms a
// call that way, more than the layer's attention kernels.
//
// f32x16 is GCC's generic vector type; GCC lowers it to what the target has (one
// AVX-512 register, two AVX2 ones, four SSE ones).
//
// fast_exp is Cephes' expf, the algorithm of the generated kernels' vector exp
// (sparse_compiler/codegen/cpu_emitter.cpp): x = n ln2 + r with |r| <= ln2 / 2, a
// degree-6 polynomial for e^r, times 2^n built in the exponent bits as two halves
// so results down to the subnormals come out right; +inf above 88.72283935, 0
// below -103.972, NaN stays NaN. Relative error below 2e-7 for normal results.
//
// fast_expm1: the Taylor polynomial of degree 7 where |x| < ln2 / 2 (exact for
// tiny x, -0 stays -0), e^x - 1 beyond, where the result is at least 0.29 in
// magnitude and the subtraction loses nothing; -1 below -103.972. Relative error
// below 4e-7 everywhere (tests/core/fast_math_test.cpp).
#pragma once

#include <cstdint>

namespace strata {

typedef float f32x16 __attribute__((vector_size(64)));
typedef int32_t i32x16 __attribute__((vector_size(64)));

inline f32x16 splat16(float v) {
  f32x16 r;
  for (int l = 0; l < 16; ++l) r[l] = v;
  return r;
}

inline f32x16 fast_exp(f32x16 x) {
  const f32x16 hi = splat16(88.72283935f), lo = splat16(-103.972084f);
  f32x16 c = x > hi ? hi : x;
  c = c < lo ? lo : c;
  const f32x16 fx = c * 1.44269504088896341f + 0.5f;
  i32x16 n = __builtin_convertvector(fx, i32x16);
  n = n + (i32x16)(__builtin_convertvector(n, f32x16) > fx);  // floor: truncation rounded negatives up
  const f32x16 t = __builtin_convertvector(n, f32x16);
  const f32x16 r = (c - t * 0.693359375f) + t * 2.12194440e-4f;
  f32x16 y = 1.9875691500e-4f * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * (r * r) + r + 1.0f;
  const i32x16 a = n >> 1, b = n - a;
  f32x16 e = y * (f32x16)((a + 127) << 23) * (f32x16)((b + 127) << 23);
  e = x > hi ? splat16(__builtin_inff()) : e;
  e = x < lo ? splat16(0.0f) : e;
  return x != x ? x : e;
}

inline f32x16 fast_expm1(f32x16 x) {
  // x + x²/2! + … + x⁷/7!, as x·(1 + x·p(x)) so that -0 stays -0.
  f32x16 p = splat16(1.0f / 5040);
  p = p * x + 1.0f / 720;
  p = p * x + 1.0f / 120;
  p = p * x + 1.0f / 24;
  p = p * x + 1.0f / 6;
  p = p * x + 0.5f;
  const f32x16 small = x * (1.0f + x * p);
  const f32x16 large = fast_exp(x) - 1.0f;
  const f32x16 ax = x < 0.0f ? -x : x;
  return ax < 0.34657359f ? small : large;
}

// One value, through lane 0: the same result as in a vector.
inline float fast_expf(float x) { return fast_exp(splat16(x))[0]; }
inline float fast_expm1f(float x) { return fast_expm1(splat16(x))[0]; }

}  // namespace strata
