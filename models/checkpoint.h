// Checkpoints: a model's parameters, its optimizer's state, and the metadata needed
// to rebuild and check them (the resolved config, the run, the epoch, the metrics).
//
// File layout (little-endian):
//   0   8 bytes   magic "STRATACK"
//   8   u32       format version (kCheckpointVersion)
//   12  u32       0 (reserved)
//   16  u64       H: byte length of the JSON header that follows
//   24  H bytes   JSON: {"meta": {...}, "tensors": [{"name", "dtype", "shape", "offset", "bytes"}]}
//       padding   zeros up to a multiple of 64
//       payload   tensor bytes, each at its 64-byte aligned offset (relative to the payload start)
//   end 16 bytes  XXH3-128 (lo, hi) of every byte before it
// The file is written through AtomicFile (temporary name, then rename), so a reader
// sees either the previous file or the complete new one. Reading verifies the
// checksum before trusting anything else, so a truncated or corrupted file is
// reported as such, never half-loaded.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.h"
#include "layers/parameter.h"

namespace strata::nn {

inline constexpr uint32_t kCheckpointVersion = 1;

struct Checkpoint {
  nlohmann::ordered_json meta = nlohmann::ordered_json::object();
  std::vector<std::pair<std::string, Tensor>> model;      // parameter name -> value
  std::vector<std::pair<std::string, Tensor>> optimizer;  // Optimizer::state()
};

void write_checkpoint(const std::filesystem::path& path, const Checkpoint& ckpt);
// Throws UserError naming the file: unreadable, not a checkpoint, a newer format,
// checksum mismatch (corrupt or truncated), or a malformed header.
Checkpoint read_checkpoint(const std::filesystem::path& path);

// Copies the checkpoint's parameters into `params` (values, not the Vars). Every
// parameter must be present with the same shape and finite values, and the checkpoint
// may hold no other; otherwise a UserError names the parameter (and both shapes).
void load_parameters(const Checkpoint& ckpt, const std::vector<Parameter>& params, const std::string& source);
// load_parameters' checks alone, for tensors kept aside (a resume point's best epoch).
void check_parameters(const std::vector<std::pair<std::string, Tensor>>& model, const std::vector<Parameter>& params,
                      const std::string& source);

// Deep copies of the current parameter values (snapshots of the best epoch).
std::vector<std::pair<std::string, Tensor>> snapshot_parameters(const std::vector<Parameter>& params);
// Takes the snapshot again into `snap`: when it already holds the same names and
// shapes its tensors are overwritten (a run's best epoch moves often, and fresh
// copies of large parameters cost page faults every time), otherwise deep copies.
// Nothing else may share `snap`'s tensors.
void refresh_snapshot(std::vector<std::pair<std::string, Tensor>>& snap,
                      const std::vector<std::pair<std::string, Tensor>>& values);
void refresh_snapshot(std::vector<std::pair<std::string, Tensor>>& snap, const std::vector<Parameter>& params);

}  // namespace strata::nn
