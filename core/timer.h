// Wall-clock timing and the robust statistics benchmarks report (median of repeats).
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace strata {

class Timer {
 public:
  Timer() : start_(std::chrono::steady_clock::now()) {}
  void reset() { start_ = std::chrono::steady_clock::now(); }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  double ms() const { return seconds() * 1e3; }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Median of a sample (copies; fine for benchmark-sized vectors). 0 for empty input.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) m = (m + *std::max_element(v.begin(), v.begin() + mid)) / 2;
  return m;
}

// Runs fn `warmup` times, then `repeats` times timed; returns the median in ms.
template <class F>
double time_median_ms(F&& fn, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> t;
  t.reserve(repeats);
  for (int i = 0; i < repeats; ++i) {
    Timer timer;
    fn();
    t.push_back(timer.ms());
  }
  return median(std::move(t));
}

}  // namespace strata
