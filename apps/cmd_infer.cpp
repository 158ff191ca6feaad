// `strata infer <config.yaml> --checkpoint <file> [--batch all|nodes.txt | --pairs pairs.txt] [--names] [--full-graph]
//  [--out predictions.csv]`:
// loads a model trained by `strata train` (GraphSAGE, GCN, GAT, or R-GCN entity
// classification), compiles the forward kernels for the config's graph, runs
// inference and writes the predictions (node id, name, predicted class, label and
// correctness where known) atomically; prints the kernel plans, their compile /
// tune time, the inference time and the accuracy on the labelled nodes of the batch. A
// --batch file of a GraphSAGE, GCN or GAT model runs the forward over the
// batch's receptive field alone (--full-graph: over the whole graph). A
// link-prediction checkpoint (data.task: link) scores the node pairs of --pairs instead,
// embedding their endpoints over their receptive field likewise.

#include <cstdio>

#include "apps/commands.h"
#include "apps/config_args.h"
#include "apps/training/trainer.h"
#include "core/host_memory.h"

namespace strata::apps {
namespace {

const RegisterCommand kInfer{Command{
    "infer", "Run a trained checkpoint on the config's graph and write predictions",
    [](CLI::App& app) -> std::function<int()> {
      struct Args {
        ConfigArgs in;
        std::string checkpoint, batch = "all", out, pairs;
        bool full_graph = false, names = false;
      };
      auto args = std::make_shared<Args>();
      args->in.add_to(app, "the training config the checkpoint was trained with");
      app.get_option("config")->required();
      app.add_option("--checkpoint", args->checkpoint, "a checkpoint file (RUN_DIR/checkpoints/run-01.ckpt)")
          ->required();
      app.add_option("--batch", args->batch,
                     "'all' (every node; R-GCN: every node of the target type) or a file of node ids, one per "
                     "line ('#' comments)");
      app.add_flag("--names", args->names,
                   "the --batch (or --pairs) file lists node names (the predictions' name column: LINQS paper ids, "
                   "entity URIs, DrugBank ids) instead of node ids");
      app.add_flag("--full-graph", args->full_graph,
                   "with a --batch or --pairs file: run the forward over the whole graph (as strata eval does), not "
                   "over the receptive field of the batch or of the pairs' endpoints (their in-neighbours within the "
                   "model's layers)");
      app.add_option("--pairs", args->pairs,
                     "link prediction: a file of node pairs to score, 'u v' or 'u,v' per line ('#' comments)");
      app.add_option("--out", args->out,
                     "predictions CSV: node,name,predicted,predicted_class,label,correct (link prediction: "
                     "u,v,score,probability,known,u_name,v_name); '-' writes it to standard output and the report "
                     "to standard error");
      return [args] {
        set_huge_pages_default(false);  // one pass: buffers written once (core/host_memory.h)
        const train::Config config = args->in.load();
        train::InferOptions o;
        o.checkpoint = args->checkpoint;
        o.batch = args->batch;
        o.out = args->out;
        o.pairs = args->pairs;
        o.full_graph = args->full_graph;
        o.names = args->names;
        // With the predictions on standard output (--out -), the report goes to stderr.
        const train::Printer to_stderr = [](const std::string& line) {
          std::fprintf(stderr, "%s\n", line.c_str());
          std::fflush(stderr);
        };
        train::run_inference(config, o, o.out == "-" ? to_stderr : train::Printer(print_line));
        return 0;
      };
    }}};

}  // namespace
}  // namespace strata::apps
