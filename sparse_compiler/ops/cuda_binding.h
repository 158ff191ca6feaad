// What an op front door (SpmmKernel, SddmmKernel) holds when it is built for a CUDA
// device: the graph's CSR arrays uploaded once, and for the generated backend the
// compiled kernel with its workspaces, launch geometry (sized once for the graph)
// and preprocess already run. Work is queued on the device's default stream
// (core/cuda_stream.h); results are read back in order by Tensor::to.
//
// The device copy of a graph is shared by every kernel bound to it (the forward
// and backward kernels of a layer, the candidates a tuner times): uploads are
// cached per (graph arrays, device) while some binding holds them. Graph arrays are
// not modified once the graph is built.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "sparse_compiler/codegen/cuda_kernel.h"
#include "sparse_compiler/formats/inspected_format.h"

namespace strata::sc {

class CudaOpBinding {
 public:
  // Uploads A's indptr, indices and values (if any) to `device`.
  CudaOpBinding(const Graph& A, Device device);

  // Adopts a compiled kernel: allocates its workspaces on the device, sizes its grids
  // for A and runs its preprocess (hoisted searches) once. `extra` binds the
  // kernel's other constant buffers (row or column scales) by name; `format`, for a
  // kernel in a decomposed format, is A's inspected format on this device.
  void attach(CompiledCudaKernel kernel, const std::vector<std::pair<std::string, Tensor>>& extra = {},
              std::shared_ptr<const InspectedFormat> format = nullptr);

  // A's arrays in `spec` (tasks of `grain` slots) on `device`: inspected on the host
  // and uploaded once, then shared, like the CSR arrays, by every kernel bound to
  // them while one holds them (the candidates a tuner times in one format).
  static std::shared_ptr<const InspectedFormat> device_format(const Graph& A, const FormatSpec& spec, int64_t grain,
                                                              Device device);

  // Structure, sizes, workspaces and the constant buffers, as device pointers; the
  // caller adds the per-call operands and calls run().
  KernelArgs args() const;
  void run(const KernelArgs& args) const;

  Device device() const { return device_; }
  const CudaStream& stream() const { return default_stream(device_.index); }
  const Tensor& values() const { return values_; }
  const CompiledCudaKernel* kernel() const { return kernel_ ? &*kernel_ : nullptr; }

 private:
  struct DeviceArrays;
  Device device_;
  int64_t rows_ = 0, cols_ = 0, nnz_ = 0;
  std::shared_ptr<const DeviceArrays> arrays_;
  Tensor indptr_, indices_, values_;
  std::optional<CompiledCudaKernel> kernel_;
  CudaGeometry geometry_;
  std::vector<std::pair<std::string, Tensor>> constants_;  // workspaces and scales
  std::shared_ptr<const InspectedFormat> format_;           // on the device
};

// Binds a device tensor argument by its device pointer (KernelArgs::buffer(Tensor)
// is for host tensors, which the interpreter can read).
void bind_device_buffer(KernelArgs& args, const std::string& name, const Tensor& t);

// Throws UserError unless `t` lives on `device` ("spmm input X: expected a tensor
// on cuda:0, got float32[2708, 64] cpu").
void check_on_device(const Tensor& t, const std::string& what, Device device);

}  // namespace strata::sc
