// What the name registry tells a loader beyond the path: the dataset's name, facts
// the files cannot state (whether edges are undirected), and the seed for splits a
// loader makes itself. Part of the cache key.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace strata::data {

namespace fs = std::filesystem;

struct SourceOptions {
  std::string name;                 // Dataset::name; loaders fall back to the file stem
  std::optional<bool> undirected;   // known from the dataset's documentation
  uint64_t seed = 0;                // splits a loader draws (HGB train/val)
  std::vector<std::string> notes;   // facts from the registry, copied to Dataset::notes
};

}  // namespace strata::data
