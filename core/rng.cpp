#include "core/rng.h"

#include <bit>
#include <cmath>
#include <numeric>
#include <sstream>

#include "core/error.h"

namespace strata {

uint64_t Rng::below(uint64_t n) {
  if (n <= 1) return 0;
  // Rejection sampling on the top of the range keeps every value equally likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do {
    x = engine_();
  } while (x >= limit);
  return x % n;
}

double Rng::normal() {
  if (have_spare_) {
    have_spare_ = false;
    return spare_;
  }
  double u1, u2;
  do {
    u1 = uniform();
  } while (u1 <= 0.0);
  u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * M_PI * u2;
  spare_ = r * std::sin(theta);
  have_spare_ = true;
  return r * std::cos(theta);
}

std::vector<int64_t> Rng::permutation(int64_t n) {
  std::vector<int64_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[below(static_cast<uint64_t>(i) + 1)]);
  return p;
}

Rng Rng::fork(uint64_t stream) {
  // SplitMix64 of (seed, stream, a draw) gives well-separated child seeds.
  uint64_t z = seed_ ^ (stream * 0x9E3779B97F4A7C15ULL) ^ engine_();
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return Rng(z ^ (z >> 31));
}

std::string Rng::state() const {
  std::ostringstream out;
  out << seed_ << ' ' << have_spare_ << ' ' << std::bit_cast<uint64_t>(spare_) << ' ' << engine_;
  return out.str();
}

void Rng::restore_state(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  uint64_t seed = 0, spare_bits = 0;
  bool have_spare = false;
  std::mt19937_64 engine;
  in >> seed >> have_spare >> spare_bits >> engine;
  STRATA_CHECK(!in.fail(),
               "{}: malformed random-number state (expected a seed, a spare flag, the spare's bits and "
               "the 312 words of an mt19937_64)",
               source);
  in >> std::ws;
  STRATA_CHECK(in.eof(), "{}: malformed random-number state (text after the engine's 312 words)", source);
  seed_ = seed;
  have_spare_ = have_spare;
  spare_ = std::bit_cast<double>(spare_bits);
  engine_ = engine;
}

}  // namespace strata
