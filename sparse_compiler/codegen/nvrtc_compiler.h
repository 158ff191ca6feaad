// NVRTC: CUDA C source (from the CUDA emitter) -> a cubin for one GPU architecture,
// or PTX when this NVRTC cannot emit machine code for it, cached on disk.
//
//   source ──► <root>/cuda/<key>.cu ──► nvrtcCompileProgram ──► <key>.cubin | <key>.ptx
//          + <key>.json manifest (size and XXH3 of the binary, target, NVRTC version, log)
//
// The key is XXH3-128 of (cache format, source, NVRTC options, NVRTC version, target),
// so a cache shared by machines with other GPUs or another toolkit never serves a
// binary built for something else. Entries are written under temporary names and
// renamed, the manifest last; a missing, truncated or corrupt entry is logged and
// rebuilt; builds of one key by several processes are serialised by a lock file
// (the same scheme as KernelCache, codegen/cache_entry.h). NVRTC is linked
// dynamically and only in builds with STRATA_WITH_CUDA; it needs no GPU.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sparse_compiler/codegen/cuda_target.h"
#include "sparse_compiler/codegen/jit_compiler.h"
#include "sparse_compiler/codegen/kernel_cache.h"

namespace strata::sc {

namespace fs = std::filesystem;

// Version of the CUDA cache key recipe and layout; part of every key.
inline constexpr int kCudaCacheFormat = 1;

struct NvrtcInfo {
  int major = 0, minor = 0;
  std::vector<int> archs;  // architectures NVRTC can emit cubin for (75, 80, ...)
  std::string version() const;  // "13.0"
};
// Queried once per process.
const NvrtcInfo& nvrtc_info();

// The target for a GPU of compute capability `arch`: a cubin when NVRTC supports the
// architecture, else PTX for the newest architecture it supports below it (the driver
// JIT-compiles it). UserError when NVRTC supports nothing at or below `arch`.
CudaTarget nvrtc_target_for(int arch);

// The options every kernel is compiled with (the target's first).
std::vector<std::string> nvrtc_options(const CudaTarget& target);

struct NvrtcOutput {
  std::string binary;  // cubin bytes, or PTX text (NUL-terminated for the driver)
  std::string log;     // NVRTC's log (warnings); empty when silent
  double compile_ms = 0;
};

// Runs NVRTC on `source` (always; see CudaBinaryCache). On failure throws
// CompileError whose message holds NVRTC's log and `source_path`, where the caller
// kept the source.
NvrtcOutput nvrtc_compile(std::string_view source, const CudaTarget& target, const fs::path& source_path);

struct CudaBinaryEntryPaths {
  fs::path source;    // <dir>/<key>.cu
  fs::path binary;    // <dir>/<key>.cubin or .ptx
  fs::path manifest;  // <dir>/<key>.json
  fs::path lock;      // <dir>/<key>.lock
};

struct CudaBinaryResult {
  std::shared_ptr<const std::string> binary;
  CudaTarget target;
  CacheOutcome outcome = CacheOutcome::MemoryHit;
  std::string key;
  fs::path source_path;
  double compile_ms = 0;  // NVRTC's time; 0 unless outcome == Compiled
  double total_ms = 0;
};

class CudaBinaryCache {
 public:
  // The process-wide cache under cache_root() (never destroyed).
  static CudaBinaryCache& global();
  // Entries live in <root>/cuda/.
  explicit CudaBinaryCache(const fs::path& root);
  CudaBinaryCache(const CudaBinaryCache&) = delete;
  CudaBinaryCache& operator=(const CudaBinaryCache&) = delete;

  // The binary for `source` and `target`, from memory, from disk or from NVRTC.
  // Throws CompileError (the .cu stays in the cache directory) when it does not compile.
  CudaBinaryResult get_or_compile(std::string_view source, const CudaTarget& target);

  std::string key_for(std::string_view source, const CudaTarget& target) const;
  CudaBinaryEntryPaths paths(const std::string& key, const CudaTarget& target) const;
  const fs::path& directory() const { return dir_; }
  void clear_memory();
  CacheStats stats() const;

 private:
  // The verified binary on disk, or nullptr (with `report`, a bad entry is logged).
  std::shared_ptr<const std::string> load_verified(const std::string& key, const CudaTarget& target, bool report);

  fs::path dir_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> memory_;
  CacheCounters counters_;
};

}  // namespace strata::sc
