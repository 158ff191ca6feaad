// Helpers for the datasets tests: a scratch folder per test, gzip and archive
// writers (zlib, libarchive) for fixture files, and a deep comparison of datasets.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "datasets/dataset.h"

namespace strata::testing {

namespace fs = std::filesystem;

// A fresh folder under the system temp dir, removed with its contents at the end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  // Writes `text` to `name` (parents created) and returns the path.
  fs::path write(const std::string& name, const std::string& text) const;
  // Writes `text` gzip-compressed (zlib) and returns the path.
  fs::path write_gz(const std::string& name, const std::string& text) const;

 private:
  fs::path path_;
};

std::string gzip_bytes(const std::string& text);
// Writes a .tar.gz (format "tgz") or .zip (format "zip") holding (member, text) pairs.
void write_archive(const fs::path& file, const std::string& format,
                   const std::vector<std::pair<std::string, std::string>>& members);
// Keeps only the first `bytes` bytes of a file.
void truncate_file(const fs::path& file, uintmax_t bytes);
// Flips one byte at `offset`.
void corrupt_byte(const fs::path& file, uintmax_t offset);

// Asserts (with gtest) that two datasets hold the same content.
void expect_same_dataset(const data::Dataset& a, const data::Dataset& b);
void expect_same_graph(const Graph& a, const Graph& b, const std::string& what);
void expect_same_tensor(const Tensor& a, const Tensor& b, const std::string& what);

// Sorted (dst, src) pairs of a graph, for order-independent comparisons.
std::vector<std::pair<int64_t, int64_t>> edge_pairs(const Graph& g);

}  // namespace strata::testing
