// What every config-driven command (train, eval, infer) takes besides its own
// options: the config file, `--set key=value` overrides and `--data-root`, loaded
// into one validated train::Config; and the printer that sends the drivers' lines
// to stdout as they come.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "apps/training/config.h"

namespace strata::apps {

struct ConfigArgs {
  std::string config, data_root;
  std::vector<std::string> sets;

  // Adds the positional config (described by `config_help`), --set and --data-root.
  void add_to(CLI::App& app, const std::string& config_help);
  // The config with the --set overrides (and --data-root as data.data_root) applied;
  // a bad key or value is a UserError naming it.
  train::Config load() const;
};

// One line to stdout, flushed (so a run can be followed through a pipe).
void print_line(const std::string& line);

}  // namespace strata::apps
