// Kernel: one compiled entry point in the making — its parameters, its declared
// axes and sparse buffers, its body, and the stage that body is in.
//
// Stages (SparseTIR's levels):
//   I   Coordinate: SparseIteration nodes, accesses by coordinate, no loops.
//   II  Position:   For loops over positions, sparse buffers accessed by position.
//   III Loops:      flat Load/Store on parameter buffers; schedules apply here.
// Every pass checks the stage it expects and stamps the stage it produces.
//
// Parameters: buffers (pointers) and scalars (int64 graph sizes). Workspace
// buffers are allocated by the runtime once per bound graph and filled by the
// kernel's preprocess body (hoisted binary searches), which runs once per graph,
// not once per launch.
#pragma once

#include <string>
#include <vector>

#include "sparse_compiler/ir/stmt.h"

namespace strata::sc {

enum class Stage : uint8_t { Loops = 0, Position = 1, Coordinate = 2 };
const char* stage_name(Stage s);  // "I (coordinate)", "II (position)", "III (loops)"

enum class ParamKind : uint8_t { Buffer, Scalar };
enum class ParamRole : uint8_t { Input, Output, Workspace };

struct Param {
  std::string name;
  ParamKind kind = ParamKind::Buffer;
  DType dtype = DType::F32;
  ParamRole role = ParamRole::Input;
  Expr size;  // workspace buffers: element count, an expression over scalar params

  static Param buffer(std::string name, DType dtype, ParamRole role = ParamRole::Input);
  static Param scalar(std::string name);  // int64
  static Param workspace(std::string name, DType dtype, Expr size);
  bool is_buffer() const { return kind == ParamKind::Buffer; }
};

struct Kernel {
  std::string name;
  Stage stage = Stage::Coordinate;
  std::vector<Param> params;
  std::vector<Axis> axes;
  std::vector<SparseBuffer> buffers;
  Stmt body;
  Stmt preprocess;
  Annotations attrs;

  const Param* find_param(const std::string& name) const;
  const Axis* find_axis(const std::string& name) const;
  const SparseBuffer* find_buffer(const std::string& name) const;
  // Throws InternalError naming `pass` unless the kernel is at `expected`.
  void require_stage(Stage expected, const char* pass) const;
};

}  // namespace strata::sc
