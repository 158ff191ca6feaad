// The reference interpreter: executes stage-III IR (scheduled or not, scalar or
// vector) directly, with bounds checks on every load and store. Tests use it as
// ground truth for generated code; it is slow by design and never used for speed.
//
// Semantics it fixes for every backend: int Div/Mod floor; float32 arithmetic is
// rounded to float32 after every operation; parallel and GPU-bound loops run in
// order; upper_bound and find behave as documented in ir/expr.h; warp_reduce_add
// sums its lanes in order and sync_threads does nothing (threads run one by one).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

class Interpreter {
 public:
  // Binds a flat buffer (host memory, `size` elements of `dtype`).
  void bind_buffer(const std::string& name, void* data, DType dtype, int64_t size);
  void bind_scalar(const std::string& name, int64_t value);
  // Runs the kernel's preprocess body (allocating its workspace buffers from the
  // bound scalars) and then its body. Every parameter must be bound, except
  // workspaces.
  void run(const Kernel& k);
  // Runs one statement with the current bindings.
  void run(const Stmt& s);

 private:
  struct Buffer {
    void* data;
    DType dtype;
    int64_t size;
  };
  std::map<std::string, Buffer> buffers_;
  std::map<std::string, int64_t> scalars_;
  std::vector<std::vector<char>> owned_;  // workspace storage
};

}  // namespace strata::sc
