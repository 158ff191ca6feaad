#include "apps/training/run_checkpoint.h"

#include <fmt/format.h>

#include "core/parallel.h"

namespace strata::train {

nlohmann::ordered_json checkpoint_meta(const Config& config, sc::Backend backend, const RunCheckpointInfo& info) {
  nlohmann::ordered_json meta = {{"format", "strata-checkpoint"},
                                 {"model", info.model},
                                 {"model_describe", info.model_describe},
                                 {"config_hash", config.hash().hex()},
                                 {"config", config.to_yaml()},
                                 {"dataset", info.dataset},
                                 {"run", info.run},
                                 {"seed", info.seed},
                                 {"policy", info.best ? "best" : "last"},
                                 {"epoch", info.epoch}};
  for (const auto& [key, value] : info.metrics.items()) meta[key] = value;
  meta["backend"] = sc::backend_name(backend);
  meta["threads"] = num_threads();
  return meta;
}

std::string write_run_checkpoint(RunDirectory& dir, int run, const nn::Checkpoint& ck) {
  const std::string name = fmt::format("checkpoints/run-{:02d}.ckpt", run);
  nn::write_checkpoint(dir.staging_path() / name, ck);
  return name;
}

}  // namespace strata::train
