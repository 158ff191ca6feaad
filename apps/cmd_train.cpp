// `strata train <config.yaml> [--set key=value ...]`: trains the model a config
// describes (apps/training/trainer.h) and writes its run dir. `--help-config` prints
// every config key with its default; `--print-config` prints the resolved config.
#include <cstdio>
#include <filesystem>

#include "apps/commands.h"
#include "apps/training/trainer.h"

namespace strata::apps {
namespace {

const RegisterCommand kTrain{Command{
    "train", "Train a GNN from a YAML config: per-epoch metrics, best-epoch summary, run dir with checkpoints",
    [](CLI::App& app) -> std::function<int()> {
      struct Args {
        std::string config, data_root;
        std::vector<std::string> sets;
        bool help_config = false, print_config = false;
      };
      auto args = std::make_shared<Args>();
      app.add_option("config", args->config, "the training config (see configs/ and --help-config)");
      app.add_option("--set", args->sets, "override a config key, e.g. --set model.hidden=64 (repeatable)")
          ->expected(1)
          ->take_all();
      app.add_option("--data-root", args->data_root, "folder holding the datasets (same as --set data.data_root=DIR)");
      app.add_flag("--help-config", args->help_config, "list every config key with its default and exit");
      app.add_flag("--print-config", args->print_config, "print the resolved config (defaults filled in) and exit");
      return [args] {
        if (args->help_config) {
          std::fputs(train::schema_help().c_str(), stdout);
          return 0;
        }
        STRATA_CHECK(!args->config.empty(), "strata train: no config given (strata train CONFIG.yaml; see --help-config)");
        std::vector<std::string> sets = args->sets;
        if (!args->data_root.empty()) sets.push_back("data.data_root=" + args->data_root);
        const train::Config config = train::Config::load(args->config, sets);
        if (args->print_config) {
          std::fputs(config.to_yaml().c_str(), stdout);
          return 0;
        }
        train::run_training(config, std::filesystem::path(args->config).stem().string(), [](const std::string& line) {
          std::fputs(line.c_str(), stdout);
          std::fputc('\n', stdout);
          std::fflush(stdout);
        });
        return 0;
      };
    }}};

}  // namespace
}  // namespace strata::apps
