#include "apps/config_args.h"

#include <cstdio>

namespace strata::apps {

void ConfigArgs::add_to(CLI::App& app, const std::string& config_help) {
  app.add_option("config", config, config_help);
  app.add_option("--set", sets, "override a config key, e.g. --set model.hidden=64 (repeatable)")
      ->expected(1)
      ->take_all();
  app.add_option("--data-root", data_root, "folder holding the datasets (same as --set data.data_root=DIR)");
}

train::Config ConfigArgs::load() const {
  std::vector<std::string> all = sets;
  if (!data_root.empty()) all.push_back("data.data_root=" + data_root);
  return train::Config::load(config, all);
}

void print_line(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace strata::apps
