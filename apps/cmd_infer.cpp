// `strata infer <config.yaml> --checkpoint <file> [--batch all|nodes.txt] [--out predictions.csv]`:
// loads a model trained by `strata train` (R-GCN entity classification), compiles
// the kernels for the config's graph, runs inference and writes the predictions
// (node id, name, predicted class, label and correctness where known) atomically;
// prints the kernel plans, their compile / tune time, the inference time and the
// accuracy on the labelled nodes of the batch.
#include <cstdio>

#include "apps/commands.h"
#include "apps/training/rgcn.h"

namespace strata::apps {
namespace {

const RegisterCommand kInfer{Command{
    "infer", "Run a trained R-GCN checkpoint on the config's graph and write predictions",
    [](CLI::App& app) -> std::function<int()> {
      struct Args {
        std::string config, checkpoint, data_root, batch = "all", out;
        std::vector<std::string> sets;
      };
      auto args = std::make_shared<Args>();
      app.add_option("config", args->config, "the training config the checkpoint was trained with")->required();
      app.add_option("--checkpoint", args->checkpoint, "a checkpoint file (RUN_DIR/checkpoints/run-01.ckpt)")
          ->required();
      app.add_option("--batch", args->batch,
                     "'all' (every node of the target type) or a file of target-type node ids, one per line ('#' "
                     "comments)");
      app.add_option("--out", args->out, "predictions CSV: node,name,predicted,predicted_class,label,correct");
      app.add_option("--set", args->sets, "override a config key (repeatable)")->expected(1)->take_all();
      app.add_option("--data-root", args->data_root, "folder holding the datasets");
      return [args] {
        std::vector<std::string> sets = args->sets;
        if (!args->data_root.empty()) sets.push_back("data.data_root=" + args->data_root);
        const train::Config config = train::Config::load(args->config, sets);
        STRATA_CHECK(config.get_string("model.name") == "rgcn",
                     "strata infer: {} builds a {} model; infer runs rgcn models (model.name: rgcn)", args->config,
                     config.get_string("model.name"));
        train::InferOptions o;
        o.checkpoint = args->checkpoint;
        o.batch = args->batch;
        o.out = args->out;
        train::run_rgcn_inference(config, o, [](const std::string& line) {
          std::fputs(line.c_str(), stdout);
          std::fputc('\n', stdout);
        });
        std::fflush(stdout);
        return 0;
      };
    }}};

}  // namespace
}  // namespace strata::apps
