// Source text both emitters put in their preludes: the index helpers generated code
// calls (floor division and modulo, the searches of ir/expr.h), written once and
// qualified for the target ("static inline" for the C++ emitter,
// "__device__ __forceinline__" for the CUDA emitter).
#pragma once

#include <string>
#include <string_view>

namespace strata::sc {

inline std::string index_helpers(std::string_view qualifier) {
  std::string text = R"(@Q@ int64_t strata_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
@Q@ int64_t strata_floormod(int64_t a, int64_t b) { return a - strata_floordiv(a, b) * b; }
template <class T>
@Q@ int64_t strata_upper_bound(const T* a, int64_t lo, int64_t hi, int64_t x) {
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if ((int64_t)a[mid] > x) hi = mid; else lo = mid + 1;
  }
  return lo;
}
template <class T>
@Q@ int64_t strata_lower_bound(const T* a, int64_t lo, int64_t hi, int64_t x) {
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if ((int64_t)a[mid] >= x) hi = mid; else lo = mid + 1;
  }
  return lo;
}
template <class T>
@Q@ int64_t strata_find(const T* a, int64_t lo, int64_t hi, int64_t x) {
  int64_t p = strata_upper_bound(a, lo, hi, x);
  return (p > lo && (int64_t)a[p - 1] == x) ? p - 1 : -1;
}
)";
  for (size_t at; (at = text.find("@Q@")) != std::string::npos;) text.replace(at, 3, qualifier);
  return text;
}

}  // namespace strata::sc
