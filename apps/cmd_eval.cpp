// `strata eval <config.yaml> --checkpoint <file>`: rebuilds the data and model a
// config describes, loads a checkpoint written by `strata train` and evaluates it,
// checking that the test accuracy (and the test logits, bit for bit) match the run
// that saved it.
#include <cstdio>

#include "apps/commands.h"
#include "apps/training/trainer.h"

namespace strata::apps {
namespace {

const RegisterCommand kEval{Command{
    "eval", "Evaluate a checkpoint saved by `strata train` on the config's data and split",
    [](CLI::App& app) -> std::function<int()> {
      struct Args {
        std::string config, checkpoint, data_root;
        std::vector<std::string> sets;
      };
      auto args = std::make_shared<Args>();
      app.add_option("config", args->config, "the training config the checkpoint was trained with")->required();
      app.add_option("--checkpoint", args->checkpoint, "a checkpoint file (RUN_DIR/checkpoints/run-01.ckpt)")
          ->required();
      app.add_option("--set", args->sets, "override a config key (repeatable)")->expected(1)->take_all();
      app.add_option("--data-root", args->data_root, "folder holding the datasets");
      return [args] {
        std::vector<std::string> sets = args->sets;
        if (!args->data_root.empty()) sets.push_back("data.data_root=" + args->data_root);
        const train::Config config = train::Config::load(args->config, sets);
        train::run_evaluation(config, args->checkpoint, [](const std::string& line) {
          std::fputs(line.c_str(), stdout);
          std::fputc('\n', stdout);
        });
        std::fflush(stdout);
        return 0;
      };
    }}};

}  // namespace
}  // namespace strata::apps
