// PackedArgs: a compiled kernel's argument list packed once, the per-call buffers
// filled by position. Checked with a stand-in entry point that records what it
// receives, so every position is visible; the ops' own tests run the real kernels
// through it.
#include <gtest/gtest.h>

#include <vector>

#include "core/tensor.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "core/error.h"

namespace strata::sc {
namespace {

std::vector<void*> seen_buffers;
std::vector<int64_t> seen_scalars;

int recording_entry(void* const* buffers, const int64_t* scalars) {
  seen_buffers.assign(buffers, buffers + 4);
  seen_scalars.assign(scalars, scalars + 2);
  return 0;
}

// Asserts that `fn` throws InternalError with `part` in its message.
template <class F>
void expect_internal_error(F&& fn, const std::string& part) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one containing: " << part;
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

Kernel four_buffer_kernel() {
  Kernel k;
  k.name = "packed_test";
  k.params = {Param::buffer("A_indptr", DType::I64), Param::scalar("m"), Param::buffer("X", DType::F32),
              Param::buffer("A_indices", DType::I32), Param::scalar("nnz"),
              Param::buffer("Y", DType::F32, ParamRole::Output)};
  return k;
}

TEST(PackedArgs, FixedArgumentsArePackedOncePerCallOnesFillTheirPositions) {
  const Tensor indptr = Tensor::zeros({5}, DType::I64), indices = Tensor::zeros({7}, DType::I32);
  KernelArgs fixed;
  fixed.buffer("A_indptr", indptr).buffer("A_indices", indices).scalar("m", 4).scalar("nnz", 7);
  // "A" is not a parameter of this kernel: accepted, and its tensor ignored.
  const PackedArgs packed(four_buffer_kernel(), recording_entry, fixed, {"X", "Y", "A"});
  const Tensor X = Tensor::zeros({3, 2}, DType::F32), Y = Tensor::zeros({4, 2}, DType::F32);
  packed.run({&X, &Y, nullptr});
  EXPECT_EQ(seen_buffers, (std::vector<void*>{indptr.raw_data(), X.raw_data(), indices.raw_data(), Y.raw_data()}));
  EXPECT_EQ(seen_scalars, (std::vector<int64_t>{4, 7}));
  // The next call's tensors replace the last one's.
  const Tensor X2 = Tensor::zeros({3, 2}, DType::F32);
  packed.run({&X2, &Y, nullptr});
  EXPECT_EQ(seen_buffers[1], X2.raw_data());
  EXPECT_EQ(seen_buffers[0], indptr.raw_data());
}

TEST(PackedArgs, RefusesAWrongDtypeAMissingTensorAndAWrongCount) {
  const Tensor indptr = Tensor::zeros({5}, DType::I64), indices = Tensor::zeros({7}, DType::I32);
  KernelArgs fixed;
  fixed.buffer("A_indptr", indptr).buffer("A_indices", indices).scalar("m", 4).scalar("nnz", 7);
  const PackedArgs packed(four_buffer_kernel(), recording_entry, fixed, {"X", "Y"});
  const Tensor X = Tensor::zeros({3, 2}, DType::F32), wrong = Tensor::zeros({3, 2}, DType::F64);
  expect_internal_error([&] { packed.run({&wrong, &X}); },
                                                  "kernel packed_test: buffer X expects a host float32 tensor");
  expect_internal_error([&] { packed.run({&X, nullptr}); }, "buffer Y expects");
  expect_internal_error([&] { packed.run({&X}); }, "1 per-call buffers passed, 2 expected");
  // A fixed argument left unbound is refused when packing, naming it.
  KernelArgs partial;
  partial.buffer("A_indptr", indptr).scalar("m", 4).scalar("nnz", 7);
  expect_internal_error(
      [&] { PackedArgs(four_buffer_kernel(), recording_entry, partial, {"X", "Y"}); }, "buffer A_indices is not bound");
}

}  // namespace
}  // namespace strata::sc
