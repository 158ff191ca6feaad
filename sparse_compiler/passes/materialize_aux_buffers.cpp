#include "sparse_compiler/passes/materialize_aux_buffers.h"

#include "core/error.h"

namespace strata::sc {
namespace {

std::vector<Axis> ancestors_of(const Axis& a) {
  std::vector<Axis> chain;
  for (Axis p = a->parent; p; p = p->parent) chain.insert(chain.begin(), p);
  return chain;
}

}  // namespace

Kernel materialize_aux_buffers(const Kernel& k) {
  k.require_stage(Stage::Coordinate, "materialize_aux_buffers");
  Kernel out = k;
  auto declare = [&](const std::string& name, std::vector<Axis> axes, DType dtype) {
    if (const SparseBuffer* b = out.find_buffer(name)) {
      STRATA_ASSERT(b->get()->axes == axes && b->get()->dtype == dtype,
                    "aux buffer {} is declared twice with different structure", name);
      return;
    }
    out.buffers.push_back(sparse_buffer(name, std::move(axes), dtype));
  };
  for (const Axis& a : k.axes) {
    if (a->is_variable()) declare(a->indptr, ancestors_of(a), DType::I64);
    if (a->is_sparse()) {
      auto chain = ancestors_of(a);
      chain.push_back(a);
      declare(a->indices, std::move(chain), a->idtype);
    }
  }
  return out;
}

AuxBuffers find_aux_buffers(const Kernel& k) {
  AuxBuffers aux;
  for (const Axis& a : k.axes) {
    if (a->is_variable()) {
      const SparseBuffer* b = k.find_buffer(a->indptr);
      STRATA_ASSERT(b, "axis {}: indptr buffer {} not materialized", a->name, a->indptr);
      aux.indptr[a.get()] = *b;
    }
    if (a->is_sparse()) {
      const SparseBuffer* b = k.find_buffer(a->indices);
      STRATA_ASSERT(b, "axis {}: indices buffer {} not materialized", a->name, a->indices);
      aux.indices[a.get()] = *b;
    }
  }
  return aux;
}

}  // namespace strata::sc
