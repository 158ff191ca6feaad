#include "sparse_compiler/ir/kernel.h"

#include "core/error.h"

namespace strata::sc {

const char* stage_name(Stage s) {
  switch (s) {
    case Stage::Coordinate: return "I (coordinate)";
    case Stage::Position: return "II (position)";
    case Stage::Loops: return "III (loops)";
  }
  return "?";
}

Param Param::buffer(std::string name, DType dtype, ParamRole role) {
  Param p;
  p.name = std::move(name);
  p.kind = ParamKind::Buffer;
  p.dtype = dtype;
  p.role = role;
  return p;
}

Param Param::scalar(std::string name) {
  Param p;
  p.name = std::move(name);
  p.kind = ParamKind::Scalar;
  p.dtype = DType::I64;
  return p;
}

Param Param::workspace(std::string name, DType dtype, Expr size) {
  Param p = buffer(std::move(name), dtype, ParamRole::Workspace);
  p.size = std::move(size);
  return p;
}

const Param* Kernel::find_param(const std::string& n) const {
  for (const auto& p : params)
    if (p.name == n) return &p;
  return nullptr;
}

const Axis* Kernel::find_axis(const std::string& n) const {
  for (const auto& a : axes)
    if (a->name == n) return &a;
  return nullptr;
}

const SparseBuffer* Kernel::find_buffer(const std::string& n) const {
  for (const auto& b : buffers)
    if (b->name == n) return &b;
  return nullptr;
}

void Kernel::require_stage(Stage expected, const char* pass) const {
  STRATA_ASSERT(stage == expected, "{} expects a stage {} kernel, but kernel '{}' is at stage {}", pass,
                stage_name(expected), name, stage_name(stage));
}

}  // namespace strata::sc
