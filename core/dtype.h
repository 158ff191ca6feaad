// Element types of tensors and index arrays.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

enum class DType : uint8_t { F32, F64, I32, I64 };

constexpr int64_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::F64: return 8;
    case DType::I32: return 4;
    case DType::I64: return 8;
  }
  return 0;
}

constexpr bool dtype_is_float(DType t) { return t == DType::F32 || t == DType::F64; }

// "float32", "float64", "int32", "int64".
std::string_view dtype_name(DType t);
// The C type spelled in generated code: "float", "double", "int32_t", "int64_t".
std::string_view dtype_ctype(DType t);
// Parses the names above (and "f32", "f64", "i32", "i64"); throws UserError naming `what`.
DType parse_dtype(std::string_view s, std::string_view what = "dtype");

template <class T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::F32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::F64; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::I32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::I64; };
template <class T> constexpr DType dtype_of = DTypeOf<T>::value;

// Calls f(T{}) with T the C++ type of `t`.
template <class F>
decltype(auto) dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::I32: return f(int32_t{});
    case DType::I64: return f(int64_t{});
  }
  return f(float{});
}

// Calls f(T{}) with T = int32_t or int64_t.
template <class F>
decltype(auto) dispatch_index(DType t, F&& f) {
  if (t == DType::I32) return f(int32_t{});
  return f(int64_t{});
}

}  // namespace strata
