#include "sparse_compiler/ir/type.h"

#include <fmt/format.h>

#include "core/error.h"

namespace strata::sc {

Type Type::from_dtype(DType t) {
  switch (t) {
    case DType::F32: return f32();
    case DType::F64: return f64();
    case DType::I32: return i32();
    case DType::I64: return i64();
  }
  STRATA_UNREACHABLE("dtype");
}

DType Type::to_dtype() const {
  if (is_float()) return bits == 32 ? DType::F32 : DType::F64;
  if (is_int()) return bits == 32 ? DType::I32 : DType::I64;
  STRATA_UNREACHABLE("no dtype for {}", str());
}

std::string Type::str() const {
  std::string base = is_bool() ? "bool" : fmt::format("{}{}", is_int() ? "int" : "float", bits);
  return lanes > 1 ? fmt::format("{}x{}", base, lanes) : base;
}

}  // namespace strata::sc
