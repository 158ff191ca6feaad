// Scalar and vector types of IR expressions.
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.h"

namespace strata::sc {

enum class TypeCode : uint8_t { Int, Float, Bool };

struct Type {
  TypeCode code = TypeCode::Int;
  uint8_t bits = 64;
  uint16_t lanes = 1;

  static constexpr Type i32(int lanes = 1) { return {TypeCode::Int, 32, static_cast<uint16_t>(lanes)}; }
  static constexpr Type i64(int lanes = 1) { return {TypeCode::Int, 64, static_cast<uint16_t>(lanes)}; }
  static constexpr Type f32(int lanes = 1) { return {TypeCode::Float, 32, static_cast<uint16_t>(lanes)}; }
  static constexpr Type f64(int lanes = 1) { return {TypeCode::Float, 64, static_cast<uint16_t>(lanes)}; }
  static constexpr Type boolean(int lanes = 1) { return {TypeCode::Bool, 1, static_cast<uint16_t>(lanes)}; }
  static Type from_dtype(DType t);

  bool is_int() const { return code == TypeCode::Int; }
  bool is_float() const { return code == TypeCode::Float; }
  bool is_bool() const { return code == TypeCode::Bool; }
  bool is_scalar() const { return lanes == 1; }
  bool is_vector() const { return lanes > 1; }
  Type element_of() const { return {code, bits, 1}; }
  Type with_lanes(int n) const { return {code, bits, static_cast<uint16_t>(n)}; }
  DType to_dtype() const;  // scalar types only
  bool operator==(const Type&) const = default;
  // "int64", "float32", "bool", "float32x16"
  std::string str() const;
};

}  // namespace strata::sc
