#include "core/dtype.h"

#include "core/error.h"

namespace strata {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "float32";
    case DType::F64: return "float64";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
  }
  return "?";
}

std::string_view dtype_ctype(DType t) {
  switch (t) {
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::I32: return "int32_t";
    case DType::I64: return "int64_t";
  }
  return "?";
}

DType parse_dtype(std::string_view s, std::string_view what) {
  if (s == "float32" || s == "f32" || s == "float") return DType::F32;
  if (s == "float64" || s == "f64" || s == "double") return DType::F64;
  if (s == "int32" || s == "i32") return DType::I32;
  if (s == "int64" || s == "i64") return DType::I64;
  STRATA_FAIL("{}: unknown dtype '{}' (expected float32, float64, int32 or int64)", what, s);
}

}  // namespace strata
