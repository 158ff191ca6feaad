// The binary dataset cache: a loaded text dataset saved as one file, so the next
// load reads arrays instead of parsing text.
//
// File layout (little-endian):
//   header, 64 bytes: magic "STRATADS", u32 format version, u32 header size,
//                     128-bit key, u64 payload offset, u64 payload size,
//                     128-bit XXH3 checksum of the payload
//   payload:          the Dataset field by field; every array starts 64-byte aligned
// The key hashes everything the content depends on (loader version, format, path,
// options, and each input file's size and modification time), so an edited input or
// a new loader makes the entry stale. The reader checks magic, version, key, size and
// checksum before trusting a byte, then maps the arrays straight out of one 64-byte
// aligned buffer read with a single large read (no per-array copies).
#pragma once

#include <cstdint>
#include <string>

#include "core/hash.h"
#include "datasets/dataset.h"

namespace strata::data {

// 2: Dataset::eval_metric.
inline constexpr uint32_t kDatasetCacheFormatVersion = 2;

enum class CacheProbe : uint8_t { Hit, Missing, Stale, Corrupt, Truncated, Unreadable };
std::string_view cache_probe_name(CacheProbe p);

struct CacheRead {
  CacheProbe status = CacheProbe::Missing;
  std::string reason;  // why it is not a hit
  std::optional<Dataset> dataset;
  int64_t file_bytes = 0;
};

// Writes `ds` under `key` atomically (temporary file, then rename). Returns the
// file size. Throws UserError when the file cannot be written.
int64_t write_dataset_cache(const fs::path& file, const Dataset& ds, const Hash128& key);

// Reads the entry if it exists and is valid for `key`. Never throws: a damaged or
// unreadable file is reported in the status (a cache must not stop a load).
CacheRead read_dataset_cache(const fs::path& file, const Hash128& key);

}  // namespace strata::data
