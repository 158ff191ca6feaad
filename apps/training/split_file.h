// A split as a file: the node ids of train, validation and test as JSON,
// {"origin": ..., "train": [...], "val": [...], "test": [...]}. `strata train`
// writes it to the run dir (split.json) and `strata export --train` beside its
// .npy files, so a peer's run can be checked to use the same nodes;
// data.split.kind: file reads one back (data.split.file), so a run can train on
// a split made elsewhere (the public Planetoid split, a split from another
// tool).
#pragma once

#include <filesystem>
#include <string>

#include "datasets/splits.h"

namespace strata::train {

namespace fs = std::filesystem;

// One line, ids as stored.
std::string split_json(const data::Splits& splits);

// Reads a split file. Every part must be a non-empty list of node ids in [0,
// num_nodes), none listed twice, no node in two parts; "origin" is optional.
// Errors name the file, the part and the offending entry. The result's origin
// says where it came from (the file and its content hash) and ids are sorted.
data::Splits read_split_json(const fs::path& file, int64_t num_nodes);

}  // namespace strata::train
