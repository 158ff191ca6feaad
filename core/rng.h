// Seeded random numbers. Every random choice in Strata (initial weights, dropout
// masks, splits, synthetic graphs) draws from an Rng built from a config seed, so a
// run is reproducible bit for bit on the same machine. The mapping from engine bits
// to values is our own (not std::*_distribution, whose output differs between
// standard libraries).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace strata {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) : engine_(seed), seed_(seed) {}

  uint64_t seed() const { return seed_; }
  uint64_t next_u64() { return engine_(); }
  // Uniform in [0, 1) with 53 (double) or 24 (float) random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  float uniform_float() { return static_cast<float>(engine_() >> 40) * 0x1.0p-24f; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n), without modulo bias.
  uint64_t below(uint64_t n);
  // Standard normal by Box-Muller.
  double normal();
  bool bernoulli(double p) { return uniform() < p; }
  // A uniformly random permutation of [0, n).
  std::vector<int64_t> permutation(int64_t n);
  // An independent stream derived from this one (for per-run or per-thread use).
  Rng fork(uint64_t stream);

  // The complete state as text (the engine's standard text form, the seed and the
  // spare normal), so a resumed run draws exactly what the interrupted one would
  // have; restore_state() throws a UserError naming `source` on malformed text.
  std::string state() const;
  void restore_state(const std::string& text, const std::string& source);

 private:
  std::mt19937_64 engine_;
  uint64_t seed_;
  bool have_spare_ = false;
  double spare_ = 0;
};

}  // namespace strata
