// `strata train <config.yaml> [--set key=value ...]`: trains the model a config
// describes (apps/training/trainer.h) and writes its run dir. `--help-config` prints
// every config key with its default; `--print-config` prints the resolved config;
// `--resume` continues a killed run from its resume point (training/resume_point.h).
#include <cstdio>
#include <filesystem>

#include "apps/commands.h"
#include "apps/config_args.h"
#include "apps/training/trainer.h"

namespace strata::apps {
namespace {

const RegisterCommand kTrain{Command{
    "train", "Train a GNN from a YAML config: per-epoch metrics, best-epoch summary, run dir with checkpoints",
    [](CLI::App& app) -> std::function<int()> {
      struct Args {
        ConfigArgs in;
        bool help_config = false, print_config = false, resume = false;
      };
      auto args = std::make_shared<Args>();
      args->in.add_to(app, "the training config (see configs/ and --help-config)");
      app.add_flag("--help-config", args->help_config, "list every config key with its default and exit");
      app.add_flag("--print-config", args->print_config, "print the resolved config (defaults filled in) and exit");
      app.add_flag("--resume", args->resume,
                   "continue the interrupted run of this config's run dir from its last resume point "
                   "(output.resume_every) instead of starting afresh");
      return [args] {
        if (args->help_config) {
          std::fputs(train::schema_help().c_str(), stdout);
          return 0;
        }
        STRATA_CHECK(!args->in.config.empty(),
                     "strata train: no config given (strata train CONFIG.yaml; see --help-config)");
        const train::Config config = args->in.load();
        if (args->print_config) {
          std::fputs(config.to_yaml().c_str(), stdout);
          return 0;
        }
        train::run_training(config, std::filesystem::path(args->in.config).stem().string(), print_line, args->resume);
        return 0;
      };
    }}};

}  // namespace
}  // namespace strata::apps
