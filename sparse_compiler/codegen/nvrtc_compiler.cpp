#include "sparse_compiler/codegen/nvrtc_compiler.h"

#include <nvrtc.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/timer.h"
#include "sparse_compiler/codegen/cache_entry.h"

namespace strata::sc {
namespace {

// An NVRTC call that can only fail through a bug or exhaustion: InternalError.
void nvrtc_check(nvrtcResult rc, const char* call) {
  STRATA_ASSERT(rc == NVRTC_SUCCESS, "{}: {}", call, nvrtcGetErrorString(rc));
}
#define STRATA_NVRTC(call) nvrtc_check((call), #call)

std::string indent(std::string_view text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out += "    ";
    out += text.substr(start, end - start);
    out += '\n';
    start = end + 1;
  }
  return out.empty() ? std::string("    (no output)\n") : out;
}

std::string program_log(nvrtcProgram prog) {
  size_t n = 0;
  STRATA_NVRTC(nvrtcGetProgramLogSize(prog, &n));
  std::string log(n, '\0');
  if (n > 0) STRATA_NVRTC(nvrtcGetProgramLog(prog, log.data()));
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// Destroys the program on every path out of nvrtc_compile.
struct ProgramGuard {
  nvrtcProgram prog = nullptr;
  ~ProgramGuard() {
    if (prog) nvrtcDestroyProgram(&prog);
  }
};

}  // namespace

std::string NvrtcInfo::version() const { return fmt::format("{}.{}", major, minor); }

const NvrtcInfo& nvrtc_info() {
  static const NvrtcInfo info = [] {
    NvrtcInfo i;
    STRATA_NVRTC(nvrtcVersion(&i.major, &i.minor));
    int n = 0;
    STRATA_NVRTC(nvrtcGetNumSupportedArchs(&n));
    i.archs.resize(static_cast<size_t>(n));
    if (n > 0) STRATA_NVRTC(nvrtcGetSupportedArchs(i.archs.data()));
    std::sort(i.archs.begin(), i.archs.end());
    return i;
  }();
  return info;
}

CudaTarget nvrtc_target_for(int arch) {
  const NvrtcInfo& info = nvrtc_info();
  if (std::find(info.archs.begin(), info.archs.end(), arch) != info.archs.end()) return {arch, true};
  int best = 0;
  for (int a : info.archs)
    if (a <= arch) best = a;
  std::string known;
  for (int a : info.archs) known += (known.empty() ? "" : ", ") + std::to_string(a);
  STRATA_CHECK(best > 0, "NVRTC {} cannot compile for compute capability {}.{} (it supports {})", info.version(),
               arch / 10, arch % 10, known);
  log_info("NVRTC {} cannot emit a cubin for sm_{}; compiling PTX for compute_{} for the driver to JIT", info.version(),
           arch, best);
  return {best, false};
}

std::vector<std::string> nvrtc_options(const CudaTarget& target) {
  // -std=c++17: the prelude uses alignas on class templates and constexpr members.
  // No fast-math flags: generated kernels must give the interpreter's results
  // up to rounding order.
  return {target.option(), "--std=c++17"};
}

NvrtcOutput nvrtc_compile(std::string_view source, const CudaTarget& target, const fs::path& source_path) {
  Timer timer;
  ProgramGuard g;
  const std::string src(source);
  const std::string name = source_path.empty() ? std::string("strata_kernel.cu") : source_path.filename().string();
  STRATA_NVRTC(nvrtcCreateProgram(&g.prog, src.c_str(), name.c_str(), 0, nullptr, nullptr));
  const std::vector<std::string> opts = nvrtc_options(target);
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  const nvrtcResult rc = nvrtcCompileProgram(g.prog, static_cast<int>(argv.size()), argv.data());
  NvrtcOutput out;
  out.log = program_log(g.prog);
  std::string command = "nvrtc";
  for (const auto& o : opts) command += " " + o;
  if (rc != NVRTC_SUCCESS) {
    throw CompileError(fmt::format("generated CUDA kernel failed to compile with NVRTC {} for {}: {}\n"
                                   "  options: {}\n  NVRTC log:\n{}  source kept at {}",
                                   nvrtc_info().version(), target.str(), nvrtcGetErrorString(rc), command,
                                   indent(out.log), source_path.empty() ? "(not kept)" : source_path.string()),
                       command, out.log, source_path, static_cast<int>(rc));
  }
  size_t n = 0;
  if (target.cubin) {
    STRATA_NVRTC(nvrtcGetCUBINSize(g.prog, &n));
    out.binary.resize(n);
    STRATA_NVRTC(nvrtcGetCUBIN(g.prog, out.binary.data()));
  } else {
    STRATA_NVRTC(nvrtcGetPTXSize(g.prog, &n));  // includes the terminating NUL
    out.binary.resize(n);
    STRATA_NVRTC(nvrtcGetPTX(g.prog, out.binary.data()));
  }
  out.compile_ms = timer.ms();
  if (!out.log.empty()) log_debug("NVRTC log for {}:\n{}", name, indent(out.log));
  return out;
}

CudaBinaryCache& CudaBinaryCache::global() {
  static CudaBinaryCache* cache = new CudaBinaryCache(cache_root());
  return *cache;
}

CudaBinaryCache::CudaBinaryCache(const fs::path& root) : dir_(root / "cuda") {}

std::string CudaBinaryCache::key_for(std::string_view source, const CudaTarget& target) const {
  const std::vector<std::string> opts = nvrtc_options(target);
  Hasher h;
  h.add("strata cuda kernel").add_u64(kCudaCacheFormat).add(source).add_u64(opts.size());
  for (const auto& o : opts) h.add(o);
  h.add(nvrtc_info().version()).add_u64(static_cast<uint64_t>(target.arch)).add_u64(target.cubin ? 1 : 0);
  return h.digest().hex();
}

CudaBinaryEntryPaths CudaBinaryCache::paths(const std::string& key, const CudaTarget& target) const {
  return {dir_ / (key + ".cu"), dir_ / (key + target.extension()), dir_ / (key + ".json"), dir_ / (key + ".lock")};
}

void CudaBinaryCache::clear_memory() {
  std::lock_guard<std::mutex> lock(mu_);
  memory_.clear();
}

CacheStats CudaBinaryCache::stats() const {
  return counters_.snapshot();
}

std::shared_ptr<const std::string> CudaBinaryCache::load_verified(const std::string& key, const CudaTarget& target,
                                                                  bool report) {
  const CudaBinaryEntryPaths p = paths(key, target);
  VerifiedEntry v = read_verified_entry(p.manifest, p.binary, key, kCudaCacheFormat, "binary", "binary");
  if (!v.bytes) {
    if (report && !v.problem.empty()) {
      counters_.rebuilt.fetch_add(1);
      log_warn("CUDA kernel cache: {}: '{}'; rebuilding the entry", v.problem, v.culprit.string());
    }
    return nullptr;
  }
  return std::make_shared<const std::string>(std::move(*v.bytes));
}

CudaBinaryResult CudaBinaryCache::get_or_compile(std::string_view source, const CudaTarget& target) {
  Timer timer;
  CudaBinaryResult res;
  res.target = target;
  res.key = key_for(source, target);
  const CudaBinaryEntryPaths p = paths(res.key, target);
  res.source_path = p.source;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = memory_.find(res.key); it != memory_.end()) {
      counters_.memory_hits.fetch_add(1);
      res.binary = it->second;
      res.outcome = CacheOutcome::MemoryHit;
      res.total_ms = timer.ms();
      return res;
    }
  }
  ensure_directory(dir_);
  auto remember = [&](std::shared_ptr<const std::string> bin, CacheOutcome outcome) {
    std::lock_guard<std::mutex> lock(mu_);
    memory_[res.key] = bin;
    res.binary = std::move(bin);
    res.outcome = outcome;
    res.total_ms = timer.ms();
    (outcome == CacheOutcome::Compiled ? counters_.compiles : counters_.disk_hits).fetch_add(1);
  };
  if (auto bin = load_verified(res.key, target, false)) {
    remember(std::move(bin), CacheOutcome::DiskHit);
    return res;
  }
  EntryLock lock(p.lock);
  if (auto bin = load_verified(res.key, target, true)) {
    remember(std::move(bin), CacheOutcome::DiskHit);
    return res;
  }
  if (lock.held()) remove_stale_temporaries(dir_, res.key);
  std::error_code ec;
  fs::remove(p.manifest, ec);
  write_file_atomic(p.source, source);
  NvrtcOutput out = nvrtc_compile(source, target, p.source);
  write_file_atomic(p.binary, out.binary);
  const nlohmann::json manifest = {
      {"format", kCudaCacheFormat},
      {"key", res.key},
      {"binary",
       {{"file", p.binary.filename().string()}, {"size", out.binary.size()}, {"xxh3", hash_string(out.binary).hex()}}},
      {"source", {{"file", p.source.filename().string()}, {"xxh3", hash_string(source).hex()}}},
      {"target", target.str()},
      {"nvrtc", nvrtc_info().version()},
      {"options", nvrtc_options(target)},
      {"log", out.log},
      {"compile_ms", out.compile_ms},
      {"created", utc_now()},
  };
  write_file_atomic(p.manifest, manifest.dump(2) + "\n");
  res.compile_ms = out.compile_ms;
  log_debug("CUDA kernel cache: compiled {} for {} in {:.0f} ms", p.binary.string(), target.str(), out.compile_ms);
  remember(std::make_shared<const std::string>(std::move(out.binary)), CacheOutcome::Compiled);
  return res;
}

}  // namespace strata::sc
