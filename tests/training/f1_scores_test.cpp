// Micro- and macro-F1 of single- and multi-label predictions against counts worked
// out by hand, and `strata infer`'s multi-label predictions (class sets in the CSV,
// exact-set accuracy, F1 over the batch's labelled and test nodes).
#include "apps/training/f1_scores.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "apps/training/inference.h"

namespace strata::train {
namespace {

// Logits of 4 nodes over 3 classes and their 0/1 labels; node 3 is unlabelled.
//   node 0: predicts {0}   (a zero logit is not positive), carries {0}: exact
//   node 1: predicts {0,1}, carries {1}: class 0 a false positive
//   node 2: predicts {},    carries {0}: class 0 a false negative
Tensor logits() { return Tensor::from_vector<float>({2, -1, 0, 1, 1, -3, -1, -2, -1, -1, 3, 2}, {4, 3}); }
Tensor labels() { return Tensor::from_vector<int64_t>({1, 0, 0, 0, 1, 0, 1, 0, 0, -1, -1, -1}, {4, 3}); }

TEST(F1Scores, MultiLabelMicroMacroAndExactSets) {
  const F1Scores s = multi_label_f1(logits(), labels(), Tensor::from_vector<int64_t>({0, 1, 2}));
  // TP 2 (node 0 class 0, node 1 class 1), FP 1, FN 1: micro 4 / 6. Per class: class 0
  // 2·1 / (2 + 1 + 1) = 0.5, class 1 1, class 2 (never present, never predicted) 0.
  EXPECT_NEAR(s.micro, 4.0 / 6.0, 1e-12);
  EXPECT_NEAR(s.macro, 0.5, 1e-12);
  EXPECT_NEAR(s.exact, 1.0 / 3.0, 1e-12);
  EXPECT_EQ(positive_classes(logits(), 0), (std::vector<int64_t>{0}));
  EXPECT_EQ(positive_classes(logits(), 3), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(positive_classes(logits(), 2).empty());
  const F1Scores none = multi_label_f1(logits(), labels(), Tensor::from_vector(std::vector<int64_t>{}));
  EXPECT_EQ(none.micro, 0.0);
  EXPECT_EQ(none.exact, 0.0);
}

TEST(F1Scores, SingleLabelMicroIsAccuracyAndMacroAveragesClasses) {
  // Predictions (argmax) 0, 1, 1, 0 against labels 0, 1, 2, 1.
  const Tensor scores = Tensor::from_vector<float>({3, 1, 0, 0, 2, 1, 0, 5, 4, 9, 8, 7}, {4, 3});
  const Tensor y = Tensor::from_vector<int64_t>({0, 1, 2, 1});
  const F1Scores s = single_label_f1(scores, y, Tensor::from_vector<int64_t>({0, 1, 2, 3}), 3);
  EXPECT_NEAR(s.micro, 0.5, 1e-12);
  EXPECT_NEAR(s.exact, 0.5, 1e-12);
  // Class 0: TP 1, FP 1 -> 2/3; class 1: TP 1, FP 1, FN 1 -> 1/2; class 2: FN 1 -> 0.
  EXPECT_NEAR(s.macro, (2.0 / 3.0 + 0.5 + 0.0) / 3.0, 1e-12);
  // Nodes 0 and 1 alone: class 2 is neither present nor predicted and, as in
  // scikit-learn's default, is left out of the average (1.0, not 2/3).
  const F1Scores two = single_label_f1(scores, y, Tensor::from_vector<int64_t>({0, 1}), 3);
  EXPECT_NEAR(two.macro, 1.0, 1e-12);
  EXPECT_NEAR(two.micro, 1.0, 1e-12);
}

TEST(F1Scores, LabelsThatAreNotZeroOrOneAreInternalErrors) {
  Tensor y = labels();
  y.data<int64_t>()[4] = 2;
  try {
    multi_label_f1(logits(), y, Tensor::from_vector<int64_t>({1}));
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("node 1 class 1 has label 2 (expected 0 or 1)"), std::string::npos)
        << e.what();
  }
}

TEST(PredictBatch, MultiLabelWritesClassSetsAndScoresTheBatch) {
  const std::filesystem::path out = std::filesystem::temp_directory_path() / "strata_f1_predict_test.csv";
  std::filesystem::remove(out);
  InferReport r;
  predict_batch({0, 1, 2, 3}, 0, logits(), labels(), Tensor::from_vector<int64_t>({1, 2}), {}, {"A", "B", "C"},
                out.string(), r);
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "node,name,predicted,predicted_class,label,correct\n"
            "0,\"\",0,\"A\",0,1\n"
            "1,\"\",0;1,\"A;B\",1,0\n"
            "2,\"\",,\"\",0,0\n"
            "3,\"\",1;2,\"B;C\",,\n");
  EXPECT_TRUE(r.multilabel);
  EXPECT_EQ(r.predicted, 4);
  EXPECT_EQ(r.labelled, 3);
  EXPECT_EQ(r.correct, 1);
  EXPECT_EQ(r.tests, 2);
  EXPECT_EQ(r.tests_correct, 0);
  EXPECT_NEAR(r.accuracy, 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(r.labelled_f1.micro, 4.0 / 6.0, 1e-12);
  // Test nodes 1 and 2: class 1 TP, class 0 FP and FN: micro 2 / 4; macro (0 + 1 + 0) / 3.
  EXPECT_NEAR(r.test_f1.micro, 0.5, 1e-12);
  EXPECT_NEAR(r.test_f1.macro, 1.0 / 3.0, 1e-12);
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace strata::train
