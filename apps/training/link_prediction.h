// Link prediction (data.task: link): `strata train` and `strata eval` for GraphSAGE,
// GCN and GAT encoders whose node embeddings score node pairs by their dot product.
//
// One training run (per seed):
//   epoch: fresh non-edges for the training edges (training.link.negatives per
//          edge, link_split.h); the training edges in shuffled steps of
//          training.link.batch_pairs (0: one step), each a full-graph forward
//          (train mode: dropout) -> embeddings h [N, model.hidden] -> the pair
//          scores h[u]·h[v] of the step's edges and non-edges through the compiled
//          SDDMM (layers/pair_scores.h) -> binary cross-entropy with logits (edges 1,
//          non-edges 0) -> backward (two SpMMs for the scores) -> optimizer step;
//   every eval_period epochs: a forward in eval mode, then the validation and test
//          edges ranked against their non-edges: Hits@K (OGB; K = training.link.hits_k,
//          the dataset's own K for OGB link datasets) and ROC-AUC; the best epoch is
//          the highest validation score of training.metric (auto: Hits@K; rocauc),
//          ties broken by the lower validation loss, and its test score is reported.
// The held-out edges never pass messages, and training non-edges avoid only the
// training edges, so nothing of the held-out split reaches training.
//
// The run dir receives what node classification's does (trainer.h): config.yaml,
// metrics.jsonl, summary.json, kernels.json, log.txt and checkpoints/run-NN.ckpt
// (their header says "task": "link" and the split seed). `strata eval` rebuilds the
// split from the config's seed and reproduces the recorded test score and the test
// scores' digest bit for bit; `strata infer --pairs` scores node pairs of a file.
// Resuming an interrupted link run (`--resume`) is refused with a message.
#pragma once

#include <filesystem>
#include <string>

#include "apps/training/config.h"
#include "apps/training/inference.h"
#include "apps/training/run_report.h"
#include "apps/training/trainer.h"

namespace strata::train {

// `strata train` for a config with data.task: link; keeps `position` where it is (trainer.h).
Summary run_link_training(const Config& config, const std::string& config_name, const Printer& print, bool resume,
                          LoopPosition& position);

// `strata eval` for a checkpoint of a link-prediction run: the validation and test
// scores again, compared with the checkpoint's (EvalReport's *_acc fields hold the
// configured link metric).
EvalReport run_link_evaluation(const Config& config, const std::filesystem::path& checkpoint, const Printer& print);

// `strata infer --pairs FILE` for a link-prediction checkpoint: the node pairs of the
// file ("u v" or "u,v" per line; --names: node names such as DrugBank ids) scored by
// the restored model; options.out receives u,v,score,probability,known,u_name,v_name
// (known: train, val or test when the pair is an edge of the run's split; names empty
// where the dataset has none), written atomically.
InferReport run_link_inference(const Config& config, const InferOptions& options, const Printer& print);

}  // namespace strata::train
