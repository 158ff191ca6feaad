// Train / validation / test node sets, and the seeded splits Strata makes when a
// dataset has none (or, as for HGB, only a train and a test list).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace strata::data {

struct Splits {
  Tensor train, val, test;  // int64 node ids (undefined = empty)
  std::string origin;       // where they came from: "trainingSet.tsv / testSet.tsv", "seeded 60/20/20"

  static int64_t size_of(const Tensor& t) { return t.defined() ? t.numel() : 0; }
  int64_t train_size() const { return size_of(train); }
  int64_t val_size() const { return size_of(val); }
  int64_t test_size() const { return size_of(test); }
  bool empty() const { return train_size() == 0 && val_size() == 0 && test_size() == 0; }
};

// Shuffles `ids` with `seed` and cuts it into train / val / test by fractions
// (test takes the rest). Sizes are floor(n * fraction); each part comes out sorted.
Splits random_split(const std::vector<int64_t>& ids, double train_fraction, double val_fraction, uint64_t seed);

// Splits `ids` into two sorted parts: floor(n * second_fraction) ids drawn with
// `seed` go to the second part, the rest to the first (HGB's 80/20 train/val).
std::pair<std::vector<int64_t>, std::vector<int64_t>> holdout(const std::vector<int64_t>& ids,
                                                               double second_fraction, uint64_t seed);

}  // namespace strata::data
