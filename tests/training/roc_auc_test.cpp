// ROC-AUC as OGB's Evaluator computes it (ogbn-proteins): areas worked out by hand,
// with ties, NaN scores, classes skipped for lack of a positive or a negative, and on
// fresh random scores against the pairwise definition P(score+ > score-) + ½ P(tie).
#include "apps/training/roc_auc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/error.h"

namespace strata::train {
namespace {

Tensor ids(std::vector<int64_t> v) { return Tensor::from_vector(v); }

TEST(RocAuc, AreasWorkedOutByHand) {
  // 4 nodes, 3 classes (column-wise below).
  //   class 0: scores 0.1 0.4 0.35 0.8, labels 0 0 1 1: scikit-learn's documented 0.75
  //   class 1: scores 0.5 0.5 0.9 0.2, labels 0 1 1 0: the tie at 0.5 splits one pair
  //            in half: pairs (+0.5,-0.5) ½, (+0.5,-0.2) 1, (+0.9,-0.5) 1, (+0.9,-0.2) 1 -> 3.5 / 4
  //   class 2: labels all 1: no negative, not averaged
  const Tensor logits =
      Tensor::from_vector<float>({0.1f, 0.5f, 1, 0.4f, 0.5f, 2, 0.35f, 0.9f, 3, 0.8f, 0.2f, 4}, {4, 3});
  const Tensor labels = Tensor::from_vector<int64_t>({0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 0, 1}, {4, 3});
  const RocAuc r = mean_roc_auc(logits, labels, ids({0, 1, 2, 3}));
  EXPECT_EQ(r.classes, 2);
  EXPECT_NEAR(r.mean, (0.75 + 0.875) / 2, 1e-12);
  EXPECT_EQ(roc_auc_classes(labels, ids({0, 1, 2, 3})), 2);

  // Nodes 2 and 3 only: class 0 has no negative, class 1 one pair (+0.9 > -0.2).
  const RocAuc sub = mean_roc_auc(logits, labels, ids({2, 3}));
  EXPECT_EQ(sub.classes, 1);
  EXPECT_NEAR(sub.mean, 1.0, 1e-12);

  // Every score tied: 0.5 whatever the labels. A reversed ranking: 0.
  const Tensor flat = Tensor::from_vector<float>({1, 1, 1, 1}, {4, 1});
  const Tensor y = Tensor::from_vector<int64_t>({0, 1, 0, 1}, {4, 1});
  EXPECT_NEAR(mean_roc_auc(flat, y, ids({0, 1, 2, 3})).mean, 0.5, 1e-12);
  const Tensor reversed = Tensor::from_vector<float>({4, 1, 3, 2}, {4, 1});
  EXPECT_NEAR(mean_roc_auc(reversed, y, ids({0, 1, 2, 3})).mean, 0.0, 1e-12);

  // No node, or no class with both kinds: undefined, reported as such.
  EXPECT_FALSE(mean_roc_auc(logits, labels, ids({})).defined());
  EXPECT_FALSE(mean_roc_auc(logits, labels, ids({3})).defined());
  EXPECT_EQ(roc_auc_classes(labels, ids({3})), 0);
}

TEST(RocAuc, NanScoresRankLowest) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // The positive with a NaN score ranks below both negatives; the other above them.
  const Tensor logits = Tensor::from_vector<float>({nan, 0.2f, 0.3f, 0.9f}, {4, 1});
  const Tensor labels = Tensor::from_vector<int64_t>({1, 0, 0, 1}, {4, 1});
  EXPECT_NEAR(mean_roc_auc(logits, labels, ids({0, 1, 2, 3})).mean, 0.5, 1e-12);
}

TEST(RocAuc, MatchesPairwiseDefinitionOnRandomScores) {
  std::mt19937_64 rng(std::random_device{}());
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t n = 1 + static_cast<int64_t>(rng() % 300), classes = 1 + static_cast<int64_t>(rng() % 7);
    std::vector<float> z(static_cast<size_t>(n * classes));
    std::vector<int64_t> y(z.size());
    for (size_t k = 0; k < z.size(); ++k) {
      z[k] = static_cast<float>(rng() % 17) / 4.0f - 2.0f;  // few distinct values: many ties
      y[k] = static_cast<int64_t>(rng() % 3 == 0);
    }
    std::vector<int64_t> index;
    for (int64_t i = 0; i < n; ++i)
      if (rng() % 4) index.push_back(i);
    double sum = 0;
    int64_t counted = 0;
    for (int64_t c = 0; c < classes; ++c) {
      double wins = 0;
      int64_t pairs = 0;
      for (int64_t a : index)
        for (int64_t b : index) {
          if (y[static_cast<size_t>(a * classes + c)] != 1 || y[static_cast<size_t>(b * classes + c)] != 0) continue;
          const float za = z[static_cast<size_t>(a * classes + c)], zb = z[static_cast<size_t>(b * classes + c)];
          wins += za > zb ? 1.0 : za == zb ? 0.5 : 0.0;
          ++pairs;
        }
      if (pairs) {
        sum += wins / static_cast<double>(pairs);
        ++counted;
      }
    }
    const RocAuc r = mean_roc_auc(Tensor::from_vector(z, {n, classes}), Tensor::from_vector(y, {n, classes}),
                                  Tensor::from_vector(index));
    ASSERT_EQ(r.classes, counted) << "trial " << trial;
    if (counted) {
      EXPECT_NEAR(r.mean, sum / static_cast<double>(counted), 1e-12) << "trial " << trial;
    }
  }
}

TEST(RocAuc, LabelsOtherThanZeroOrOneAreRefused) {
  const Tensor logits = Tensor::from_vector<float>({0, 1}, {2, 1});
  const Tensor labels = Tensor::from_vector<int64_t>({0, -1}, {2, 1});
  try {
    mean_roc_auc(logits, labels, ids({0, 1}));
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("node 1 class 0 has label -1 (expected 0 or 1)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace strata::train
