#include "datasets/splits.h"

#include <algorithm>
#include <cmath>

#include "core/rng.h"

namespace strata::data {
namespace {
Tensor sorted_tensor(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return Tensor::from_vector(v);
}
int64_t part_size(size_t n, double fraction) {
  return static_cast<int64_t>(std::floor(static_cast<double>(n) * fraction + 1e-9));
}
}  // namespace

Splits random_split(const std::vector<int64_t>& ids, double train_fraction, double val_fraction, uint64_t seed) {
  STRATA_CHECK(train_fraction >= 0 && val_fraction >= 0 && train_fraction + val_fraction <= 1.0 + 1e-12,
               "split fractions train={} val={} must be non-negative and sum to at most 1", train_fraction,
               val_fraction);
  Rng rng(seed);
  const std::vector<int64_t> perm = rng.permutation(static_cast<int64_t>(ids.size()));
  const int64_t n_train = part_size(ids.size(), train_fraction);
  const int64_t n_val = std::min<int64_t>(part_size(ids.size(), val_fraction), static_cast<int64_t>(ids.size()) - n_train);
  std::vector<int64_t> tr, va, te;
  for (int64_t i = 0; i < static_cast<int64_t>(perm.size()); ++i) {
    const int64_t id = ids[perm[i]];
    (i < n_train ? tr : i < n_train + n_val ? va : te).push_back(id);
  }
  Splits s;
  s.train = sorted_tensor(std::move(tr));
  s.val = sorted_tensor(std::move(va));
  s.test = sorted_tensor(std::move(te));
  s.origin = fmt::format("seeded random split {:g}/{:g}/{:g}, seed {}", train_fraction * 100, val_fraction * 100,
                         (1 - train_fraction - val_fraction) * 100, seed);
  return s;
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> holdout(const std::vector<int64_t>& ids, double second_fraction,
                                                               uint64_t seed) {
  Rng rng(seed);
  const std::vector<int64_t> perm = rng.permutation(static_cast<int64_t>(ids.size()));
  const int64_t n_second = part_size(ids.size(), second_fraction);
  std::vector<int64_t> first, second;
  for (int64_t i = 0; i < static_cast<int64_t>(perm.size()); ++i) (i < n_second ? second : first).push_back(ids[perm[i]]);
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  return {std::move(first), std::move(second)};
}

}  // namespace strata::data
