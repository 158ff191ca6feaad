// A tiny reader for the .npy files `strata export` writes (format 1.0, C order,
// little-endian <f4 / <i4 / <i8), plus the timing and output helpers the native
// peer programs (mkl_bench.cpp, graphblas_bench.cpp) share. Not part of Strata.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace peers {

struct Npy {
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<char> data;
  int64_t numel() const {
    int64_t n = 1;
    for (auto s : shape) n *= s;
    return n;
  }
  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(data.data()); }
};

inline Npy load_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  char magic[8];
  f.read(magic, 8);
  if (std::memcmp(magic, "\x93NUMPY", 6) != 0) throw std::runtime_error(path + ": not a .npy file");
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    f.read(reinterpret_cast<char*>(b), 2);
    hlen = b[0] | (b[1] << 8);
  } else {
    unsigned char b[4];
    f.read(reinterpret_cast<char*>(b), 4);
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
  }
  std::string h(hlen, ' ');
  f.read(h.data(), hlen);
  Npy n;
  auto d = h.find("'descr': '");
  n.descr = h.substr(d + 10, h.find('\'', d + 10) - d - 10);
  if (h.find("'fortran_order': False") == std::string::npos) throw std::runtime_error(path + ": Fortran order");
  auto s = h.find('(', h.find("'shape'"));
  auto e = h.find(')', s);
  std::string dims = h.substr(s + 1, e - s - 1);
  size_t pos = 0;
  while (pos < dims.size()) {
    size_t c = dims.find(',', pos);
    if (c == std::string::npos) c = dims.size();
    std::string item = dims.substr(pos, c - pos);
    if (item.find_first_not_of(' ') != std::string::npos) n.shape.push_back(std::stoll(item));
    pos = c + 1;
  }
  const int64_t esz = n.descr == "<f4" || n.descr == "<i4" ? 4 : 8;
  n.data.resize(static_cast<size_t>(n.numel() * esz));
  f.read(n.data.data(), static_cast<std::streamsize>(n.data.size()));
  if (!f) throw std::runtime_error(path + ": short read");
  return n;
}

// Column indices as int64 whatever the file stores.
inline std::vector<int64_t> load_indices(const std::string& path) {
  Npy n = load_npy(path);
  std::vector<int64_t> v(static_cast<size_t>(n.numel()));
  if (n.descr == "<i4")
    for (size_t i = 0; i < v.size(); ++i) v[i] = n.as<int32_t>()[i];
  else
    std::memcpy(v.data(), n.data.data(), v.size() * 8);
  return v;
}

// numpy.allclose(got, want, rtol, atol); returns "" or a short mismatch description.
inline std::string check_close(const float* got, const float* want, int64_t n, double rtol = 1e-3, double atol = 1e-3) {
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(double(got[i]) - double(want[i]));
    if (!(d <= atol + rtol * std::fabs(double(want[i])))) {
      if (first < 0) first = i;
      ++bad;
      worst = std::max(worst, std::isnan(d) ? INFINITY : d);
    }
  }
  if (!bad) return "";
  char buf[200];
  std::snprintf(buf, sizeof buf, "MISMATCH %lld of %lld elements, first at %lld, max abs err %.3g", (long long)bad,
                (long long)n, (long long)first, worst);
  return buf;
}

// Warm-up twice (once when a call takes budget_s), then repeats until at least
// min_repeats runs and ~budget_s seconds (at most max_repeats; at least 3 once the
// row has taken 10 x budget_s); the median in ms. Same rule as common.py.
inline double time_ms(const std::function<void()>& fn, int min_repeats = 10, double budget_s = 1.0, int max_repeats = 200) {
  using clk = std::chrono::steady_clock;
  const auto w = clk::now();
  fn();
  if (std::chrono::duration<double>(clk::now() - w).count() < budget_s) fn();
  std::vector<double> t;
  const auto start = clk::now();
  while ((int)t.size() < max_repeats) {
    const auto a = clk::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(clk::now() - a).count());
    const double el = std::chrono::duration<double>(clk::now() - start).count();
    if (((int)t.size() >= min_repeats && el >= budget_s) || ((int)t.size() >= 3 && el >= 10 * budget_s)) break;
  }
  std::sort(t.begin(), t.end());
  const size_t m = t.size() / 2;
  return t.size() % 2 ? t[m] : 0.5 * (t[m - 1] + t[m]);
}

// One result line on stdout: tab-separated variant, op, F, ms, status, detail.
inline void emit(const std::string& variant, const std::string& op, int64_t F, double ms, const std::string& status,
                 const std::string& detail = "") {
  std::printf("ROW\t%s\t%s\t%lld\t%.6f\t%s\t%s\n", variant.c_str(), op.c_str(), (long long)F, ms, status.c_str(),
              detail.c_str());
  std::fflush(stdout);
}

}  // namespace peers
