// The memory-bandwidth floor: a STREAM-like triad on the current threads.
#include <omp.h>

#include "benchmarks/baselines/baselines.h"
#include "core/timer.h"

namespace strata::baselines {

double measure_stream_triad_gbs(int64_t bytes_per_array, int repeats) {
  const int64_t n = bytes_per_array / static_cast<int64_t>(sizeof(double));
  Tensor a = Tensor::empty({n}, DType::F64), b = Tensor::empty({n}, DType::F64), c = Tensor::empty({n}, DType::F64);
  double* pa = a.data<double>();
  double* pb = b.data<double>();
  double* pc = c.data<double>();
  // First touch on the threads that will use the pages.
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    pa[i] = 0;
    pb[i] = 1;
    pc[i] = 2;
  }
  const double ms = time_median_ms(
      [&] {
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; ++i) pa[i] = pb[i] + 3.0 * pc[i];
      },
      1, repeats);
  // Triad moves three arrays: two reads and one write.
  return 3.0 * static_cast<double>(bytes_per_array) / (ms * 1e6);
}

}  // namespace strata::baselines
