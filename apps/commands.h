// apps/: the `strata` command. Each subcommand lives in its own cmd_<name>.cpp and
// registers itself here; main.cpp parses the command line (CLI11), runs the chosen
// subcommand, and turns errors into a message and a non-zero exit:
//   exit 1  a UserError (bad input: the message names it)
//   exit 2  a command-line error (unknown option, missing argument)
//   exit 3  an InternalError (a bug in Strata)
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace strata::apps {

// A subcommand: `setup` declares its options on the CLI11 sub-app and returns the
// function to run once parsing succeeded.
struct Command {
  std::string name;
  std::string help;
  std::function<std::function<int()>(CLI::App&)> setup;
};

std::vector<Command>& command_registry();

struct RegisterCommand {
  explicit RegisterCommand(Command c) { command_registry().push_back(std::move(c)); }
};

}  // namespace strata::apps
