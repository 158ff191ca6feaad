// What `strata infer` does alike for every model (GraphSAGE, GCN and GAT in
// trainer.h, R-GCN in rgcn.h): the batch of nodes to predict, the predictions CSV
// (written atomically) and the lines that close the run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/training/f1_scores.h"
#include "apps/training/roc_auc.h"
#include "apps/training/run_report.h"
#include "core/tensor.h"

namespace strata::train {

namespace fs = std::filesystem;

struct InferOptions {
  fs::path checkpoint;
  std::string batch = "all";  // "all" or a file of node ids, one per line
  bool full_graph = false;    // a --batch file: run the whole graph's forward, not the batch's receptive field
  bool names = false;         // the --batch file lists node names, not ids
  std::string out;            // predictions CSV ("" = none)
  std::string pairs;          // link prediction: a file of node pairs to score
};

struct InferReport {
  int64_t predicted = 0, labelled = 0, correct = 0;  // multi-label: correct = the exact class set
  int64_t tests = 0, tests_correct = 0;  // the batch's nodes in the checkpoint's test split
  double accuracy = 0, build_ms = 0, tune_ms = 0, compile_ms = 0, infer_ms = 0;
  // What the forward pass ran over, for the closing line: "" = the whole graph,
  // else e.g. "the batch's 2-hop in-neighbourhood, 1,234 of 22,470 nodes".
  std::string forward;
  // Multi-label only: micro- and macro-F1 and ROC-AUC over the batch's labelled and test nodes.
  bool multilabel = false;
  F1Scores labelled_f1, test_f1;
  RocAuc labelled_auc, test_auc;
};

// The node ids --batch names: every id in [0, count) for "all", else those a file
// lists, one per line ('#' starts a comment; blank lines are skipped). With
// `by_name` each line is a node's name as the dataset's files write it (the
// predictions' name column: LINQS paper ids, entity URIs), looked up in `names`. A
// bad line is an error naming the file and line; `what` names what holds them ("the
// target type 'entity'", "the graph").
std::vector<int64_t> read_node_batch(const std::string& batch, int64_t count, const std::string& what,
                                     bool by_name = false, const std::vector<std::string>& names = {});

// Writes `csv` to `out` atomically (AtomicFile), or to standard output for "-"; nothing
// for "".
void write_csv_output(const std::string& out, const std::string& csv);

// A CSV field in double quotes (quotes doubled, line breaks written as \n, \r).
std::string csv_quote(const std::string& s);

// The argmax of one row of a [N, C] matrix (the first of equal maxima).
int64_t argmax_row(const Tensor& scores, int64_t row);

// Predicts every node of `batch` from `scores` (row offset + id; log-probabilities
// or logits), counts the labelled and test nodes among them into `report`, and, when
// `out` is not empty, writes node,name,predicted,predicted_class,label,correct rows
// to it atomically. `labels` and `test` use the same rows as `scores`; `names` (may
// be empty) and the batch use local ids. Multi-label `labels` (int64 [N, C]): a node
// is predicted every class of positive logit (f1_scores.h), the class columns list
// sets ("0;3", "Comedy;Drama") and `correct` is 1 for the exact set.
void predict_batch(const std::vector<int64_t>& batch, int64_t offset, const Tensor& scores, const Tensor& labels,
                   const Tensor& test, const std::vector<std::string>& names,
                   const std::vector<std::string>& class_names, const std::string& out, InferReport& report);
// The same with the row of `scores` (and of `labels` and `test`) for batch[k] given
// by rows[k]: a batch predicted from the logits of its own receptive field.
void predict_batch(const std::vector<int64_t>& batch, const std::vector<int64_t>& rows, const Tensor& scores,
                   const Tensor& labels, const Tensor& test, const std::vector<std::string>& names,
                   const std::vector<std::string>& class_names, const std::string& out, InferReport& report);

// The closing lines: inference time and kernel build times, the accuracy on the
// batch's labelled and test nodes, and where the predictions went; `of_type` follows
// the batch's node count ("" or " of type entity").
void print_inference(const Printer& print, const InferReport& report, const std::string& of_type, int64_t graph_nodes,
                     const std::string& out);

}  // namespace strata::train
