#include <cstdio>
#include <exception>
#include <string_view>

#include "apps/commands.h"
#include "core/error.h"
#include "core/log.h"
#include "core/memory_limits.h"
#include "core/provenance.h"

namespace strata::apps {
std::vector<Command>& command_registry() {
  static std::vector<Command> registry;
  return registry;
}
}  // namespace strata::apps

int main(int argc, char** argv) {
  using namespace strata;
  CLI::App app{"strata: a GNN runtime whose sparse kernels are compiled for each graph"};
  app.require_subcommand(1);
  app.set_version_flag("--version", build_info().str() + "\nhost: " + host_cpu_model());
  std::function<int()> run;
  for (auto& cmd : apps::command_registry()) {
    CLI::App* sub = app.add_subcommand(cmd.name, cmd.help);
    auto fn = cmd.setup(*sub);
    sub->callback([&run, fn] { run = fn; });
  }
  // "strata --version foo": CLI11 answers the flag as soon as it sees it and would
  // drop the rest unread.
  for (int i = 1; i < argc && argc > 2; ++i)
    if (std::string_view(argv[i]) == "--version") {
      std::fprintf(stderr, "strata: --version takes no other arguments (got '%s')\n", argv[i == 1 ? 2 : 1]);
      return 2;
    }
  (void)log_level();  // reads STRATA_LOG now, so a bad value is reported even if nothing logs
  // "strata frobnicate": CLI11 would say only that a subcommand is required.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const auto& cmd : apps::command_registry()) {
      known = known || cmd.name == argv[1];
      names += (names.empty() ? "" : ", ") + cmd.name;
    }
    if (!known) {
      std::fprintf(stderr, "strata: unknown command '%s' (commands: %s; strata --help)\n", argv[1], names.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  // An empty value (--out '', a config path of "") is never meaningful: CLI11 accepts it,
  // and it would then mean the option's default or nothing at all.
  for (const CLI::App* sub : app.get_subcommands())
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->get_type_size() == 0) continue;  // a flag
      for (const std::string& value : opt->results())
        if (value.empty()) {
          std::fprintf(stderr, "strata %s: %s: expected a value, got an empty string\n", sub->get_name().c_str(),
                       opt->get_name().c_str());
          return 2;
        }
    }
  try {
    (void)memory_headroom();  // a bad STRATA_MEMORY_LIMIT is refused now, not at the first large buffer
    return run ? run() : 0;
  } catch (const UserError& e) {
    std::fprintf(stderr, "strata: error: %s\n", e.what());
    return 1;
  } catch (const InternalError& e) {
    std::fprintf(stderr, "strata: %s\n(this is a bug in Strata; please report it)\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata: unexpected error: %s\n", e.what());
    return 3;
  }
}
