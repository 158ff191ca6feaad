// `strata eval <config.yaml> --checkpoint <file>`: rebuilds the data and model a
// config describes, loads a checkpoint written by `strata train` and evaluates it,
// checking that the test accuracy (and the test logits, bit for bit) match the run
// that saved it; exits 1 when they do not and the backend and thread count are the
// run's (another backend or thread count explains a difference).

#include <cstdio>

#include "apps/commands.h"
#include "apps/config_args.h"
#include "apps/training/trainer.h"
#include "core/host_memory.h"

namespace strata::apps {
namespace {

const RegisterCommand kEval{Command{
    "eval", "Evaluate a checkpoint saved by `strata train` on the config's data and split",
    [](CLI::App& app) -> std::function<int()> {
      struct Args {
        ConfigArgs in;
        std::string checkpoint;
      };
      auto args = std::make_shared<Args>();
      args->in.add_to(app, "the training config the checkpoint was trained with");
      app.get_option("config")->required();
      app.add_option("--checkpoint", args->checkpoint, "a checkpoint file (RUN_DIR/checkpoints/run-01.ckpt)")
          ->required();
      return [args] {
        set_huge_pages_default(false);  // one pass: buffers written once (core/host_memory.h)
        const train::EvalReport r = train::run_evaluation(args->in.load(), args->checkpoint, print_line);
        if (r.identical) return 0;
        // Run on purpose with another backend or thread count, a difference is expected;
        // otherwise the check failed, and so does the command (for scripts and CI too).
        if (!r.runtime_changes.empty()) {
          print_line("(expected: this evaluation runs " + r.runtime_changes + ")");
          return 0;
        }
        std::fprintf(stderr,
                     "strata: error: the evaluation of '%s' does not reproduce the recorded run (above), with the "
                     "run's backend and thread count\n",
                     args->checkpoint.c_str());
        return 1;
      };
    }}};

}  // namespace
}  // namespace strata::apps
