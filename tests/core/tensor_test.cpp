#include "core/tensor.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "core/buffer_pool.h"
#include "core/cuda_driver.h"
#include "core/host_memory.h"
#include "core/rng.h"
#include "tests/support/test_support.h"

namespace strata {
namespace {

TEST(Tensor, EmptyHasShapeDtypeAndAlignedStorage) {
  Tensor t = Tensor::empty({3, 5}, DType::F32);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.ndim(), 2);
  EXPECT_EQ(t.dim(0), 3);
  EXPECT_EQ(t.dim(1), 5);
  EXPECT_EQ(t.numel(), 15);
  EXPECT_EQ(t.nbytes(), 60);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
  EXPECT_EQ(t.describe(), "float32[3, 5] cpu");
}

TEST(Tensor, LargeStorageIsHugePageAligned) {
  // 5 MiB of floats: at the 2 MiB boundary huge pages need, and fully usable.
  Tensor t = Tensor::zeros({5 * 1024 * 256}, DType::F32);
  const auto addr = reinterpret_cast<uintptr_t>(t.raw_data());
  if (huge_pages_enabled()) {
    EXPECT_EQ(addr % kHugePageBytes, 0u);
  }
  EXPECT_EQ(addr % kTensorAlignment, 0u);
  t.data<float>()[t.numel() - 1] = 3.0f;
  EXPECT_EQ(t.data<float>()[t.numel() - 1], 3.0f);
  // Small tensors keep the ordinary alignment (no 2 MiB per tiny tensor).
  Tensor small = Tensor::zeros({16}, DType::F32);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.raw_data()) % kTensorAlignment, 0u);
}

TEST(Tensor, OnePassCommandsTurnTheHugePageAdviceOff) {
  if (const char* v = std::getenv("STRATA_HUGE_PAGES"); v != nullptr && *v != '\0')
    GTEST_SKIP() << "STRATA_HUGE_PAGES=" << v << " overrides the default this test sets";
  EXPECT_TRUE(huge_pages_enabled()) << "the default is on";
  set_huge_pages_default(false);  // what strata eval and strata infer do
  EXPECT_FALSE(huge_pages_enabled());
  release_host_pool();  // a kept 2 MiB-aligned block would prove nothing
  bool all_huge_aligned = true;
  std::vector<Tensor> kept;
  for (int i = 0; i < 8; ++i) {  // 8 blocks of 5 MiB: not all 2 MiB-aligned by chance
    kept.push_back(Tensor::zeros({5 * 1024 * 256 + 16 * i}, DType::F32));
    all_huge_aligned = all_huge_aligned && reinterpret_cast<uintptr_t>(kept.back().raw_data()) % kHugePageBytes == 0;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(kept.back().raw_data()) % kTensorAlignment, 0u);
  }
  EXPECT_FALSE(all_huge_aligned) << "without the advice, large blocks need no 2 MiB alignment";
  set_huge_pages_default(true);
  EXPECT_TRUE(huge_pages_enabled());
}

TEST(Tensor, AllDtypesRoundTrip) {
  Tensor a = Tensor::from_list<int32_t>({1, -2, 3});
  Tensor b = Tensor::from_list<int64_t>({int64_t{1} << 40, -5});
  Tensor c = Tensor::from_list<double>({0.25, 1e300});
  Tensor d = Tensor::from_list<float>({1.5f});
  EXPECT_EQ(a.dtype(), DType::I32);
  EXPECT_EQ(b.at<int64_t>(0), int64_t{1} << 40);
  EXPECT_EQ(c.at<double>(1), 1e300);
  EXPECT_EQ(d.item_as_double(0), 1.5);
  EXPECT_EQ(a.item_as_double(1), -2.0);
}

TEST(Tensor, ZerosFillAndCast) {
  Tensor t = Tensor::zeros({4}, DType::F64);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.at<double>(i), 0.0);
  t.fill(2.5);
  Tensor i = t.cast(DType::I32);
  EXPECT_EQ(i.at<int32_t>(3), 2);
  EXPECT_EQ(t.at<double>(3), 2.5);
}

TEST(Tensor, ReshapeSharesStorageCloneCopies) {
  Tensor t = Tensor::arange(6, DType::F32);
  Tensor r = t.reshape({2, 3});
  Tensor c = t.clone();
  r.at<float>(4) = 100;
  EXPECT_EQ(t.at<float>(4), 100);
  EXPECT_EQ(c.at<float>(4), 4);
}

TEST(Tensor, SliceRowsIsAView) {
  Tensor t = Tensor::arange(12, DType::F32).reshape({4, 3});
  Tensor s = t.slice_rows(1, 3);
  EXPECT_EQ(s.shape(), (Shape{2, 3}));
  EXPECT_EQ(s.at<float>(0), 3);
  s.at<float>(5) = -1;
  EXPECT_EQ(t.at<float>(8), -1);
}

TEST(Tensor, GatherRowsCopiesRowsInTheirOrderWithRepeats) {
  const Tensor t = Tensor::from_vector(std::vector<float>{0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32}, {4, 3});
  const Tensor g = t.gather_rows({3, 0, 3});
  ASSERT_EQ(g.shape(), (Shape{3, 3}));
  EXPECT_EQ(std::vector<float>(g.data<float>(), g.data<float>() + 9),
            (std::vector<float>{30, 31, 32, 0, 1, 2, 30, 31, 32}));
  const Tensor labels = Tensor::from_vector(std::vector<int64_t>{7, -1, 5});
  const Tensor l = labels.gather_rows({2, 1});
  ASSERT_EQ(l.shape(), (Shape{2}));
  EXPECT_EQ(l.data<int64_t>()[0], 5);
  EXPECT_EQ(l.data<int64_t>()[1], -1);
  EXPECT_EQ(t.gather_rows({}).shape(), (Shape{0, 3}));
  // Rows from a view start at the view's first row.
  EXPECT_EQ(t.slice_rows(2, 4).gather_rows({1}).data<float>()[0], 30);
  EXPECT_THROW((void)t.gather_rows({4}), InternalError);
}

TEST(Tensor, EigenMapIsZeroCopyRowMajor) {
  Tensor t = Tensor::arange(6, DType::F32).reshape({2, 3});
  auto m = t.as_matrix<float>();
  EXPECT_EQ(m.rows(), 2);
  EXPECT_EQ(m.cols(), 3);
  EXPECT_EQ(m(1, 0), 3.0f);
  m(0, 2) = 42;
  EXPECT_EQ(t.at<float>(2), 42.0f);
  Tensor w = Tensor::full({3, 2}, DType::F32, 1.0);
  RowMatrix<float> prod = m * w.as_matrix<float>();
  EXPECT_FLOAT_EQ(prod(1, 1), 3 + 4 + 5);
}

TEST(Tensor, RandomInitIsSeeded) {
  Rng a(7), b(7), c(8);
  Tensor x = Tensor::uniform({100}, -1, 1, a);
  Tensor y = Tensor::uniform({100}, -1, 1, b);
  Tensor z = Tensor::uniform({100}, -1, 1, c);
  EXPECT_EQ(max_abs_diff(x, y), 0.0);
  EXPECT_GT(max_abs_diff(x, z), 0.0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_GE(x.at<float>(i), -1.0f);
    EXPECT_LT(x.at<float>(i), 1.0f);
  }
}

TEST(Tensor, AllCloseReportsWorstElement) {
  Tensor a = Tensor::from_list<float>({1, 2, 3});
  Tensor b = Tensor::from_list<float>({1, 2.5f, 3});
  CloseReport r = all_close(a, b, 0, 1e-3);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.worst_index, 1);
  EXPECT_TRUE(all_close(a, a).ok);
  Tensor n = Tensor::from_list<float>({1, NAN, 3});
  EXPECT_FALSE(all_close(n, a).ok);
}

TEST(Tensor, ToCpuIsShare) {
  Tensor t = Tensor::arange(3);
  EXPECT_EQ(t.to(Device::cpu()).raw_data(), t.raw_data());
}

TEST(TensorErrorTest, ChecksNameTheArgument) {
  Tensor t = Tensor::zeros({2, 3}, DType::F64);
  testing::expect_user_error([&] { check_tensor(t, "features", DType::F32, 2); },
                             {"features", "expected dtype float32", "float64[2, 3]"});
  testing::expect_user_error([&] { check_shape(t, "weights", {3, 2}); }, {"weights", "[3, 2]", "[2, 3]"});
  testing::expect_user_error([&] { check_tensor(Tensor(), "x", DType::F32, 2); }, {"x", "undefined"});
  testing::expect_user_error([] { Tensor::empty({2, -1}, DType::F32); }, {"negative dimension"});
}

TEST(TensorErrorTest, MoreThanTheMachineHasIsRefusedBeforeItIsTouched) {
  // Linux would grant this and kill the process once the pages were written.
  // Linux has reported MemAvailable since 3.14; where it is missing the check is off
  // (available_host_bytes() returns -1), which this project's Linux targets never are.
  const int64_t available = available_host_bytes();
  ASSERT_GE(available, 0) << "/proc/meminfo has no MemAvailable: the allocation check would be off";
  const int64_t floats = (available + (int64_t{1} << 30)) / 4;
  testing::expect_user_error([&] { (void)Tensor::empty({floats}, DType::F32); },
                             {"out of host memory: a buffer of", "GiB this machine has available"});
  // Below the checked size nothing is read from /proc.
  EXPECT_EQ(Tensor::empty({1024}, DType::F32).numel(), 1024);
}

TEST(TensorErrorTest, CudaTensorWithoutGpuSaysWhy) {
  if (cuda_driver()) GTEST_SKIP() << "a GPU is present; this test covers machines without one";
  testing::expect_user_error([] { Tensor::empty({4}, DType::F32, Device::cuda(0)); },
                             {"needs a CUDA GPU"});
}

}  // namespace
}  // namespace strata
