// The JIT layer: turns a C++ source string (written by the emitter) into a loaded
// shared library.
//
//   source ──► <dir>/<key>.cc ──► system compiler (popen) ──► <key>.so.tmp.<pid>.<n>
//          ──► rename to <key>.so ──► dlopen(RTLD_NOW | RTLD_LOCAL) ──► SharedLibrary
//
// The compiler is STRATA_CXX, else the one Strata was built with (CMake STRATA_JIT_CXX).
// Every kernel is compiled with base_flags(), then STRATA_CXXFLAGS, then the caller's
// extra flags. A kernel's identity for caching is kernel_key(): a hash of the source,
// those flags and the compiler's identity, which includes what -march=native resolves
// to on this machine, so a cache shared by machines with different ISAs never serves a
// binary built for another CPU.
//
// compile() always runs the compiler; KernelCache (kernel_cache.h) is the front door
// that avoids it. Compared with TACO's runtime compile (random file names, system(),
// no cache), everything here is content-addressed, keeps the compiler's output, and
// fails with the exact command, the diagnostics and the kept source.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace strata::sc {

namespace fs = std::filesystem;

// Version of the key recipe and of the on-disk cache layout; part of every key. Bump it
// whenever either changes so old entries are never misread.
inline constexpr int kKernelCacheFormat = 1;

// A generated kernel did not compile (or the compiler could not be run). The message
// carries the full command, the compiler's output and the path of the kept source.
class CompileError : public UserError {
 public:
  CompileError(const std::string& message, std::string command, std::string output, fs::path source_path,
               int exit_status);
  const std::string& command() const { return command_; }
  const std::string& output() const { return output_; }
  const fs::path& source_path() const { return source_path_; }
  // The compiler's exit status; 128 + signal when it was killed; -1 when unknown.
  int exit_status() const { return exit_status_; }

 private:
  std::string command_, output_;
  fs::path source_path_;
  int exit_status_;
};

struct CompileOptions {
  // Compiler command, split on whitespace (so "ccache g++" works); empty: default_compiler().
  std::string cxx;
  // Appended after base_flags() and STRATA_CXXFLAGS; part of the cache key.
  std::vector<std::string> extra_flags;
  // Where compile() writes <key>.cc and <key>.so; empty: cache_root()/"jit".
  // KernelCache ignores it (it uses its own directory).
  fs::path work_dir;
};

// STRATA_CXX when set, else the compiler Strata was built with.
std::string default_compiler();
// -std=c++17 -O3 -march=native -fopenmp -fPIC -shared -fno-math-errno -Wl,-z,defs
// (the .cpp says why the last two are there).
const std::vector<std::string>& base_flags();
// STRATA_CXXFLAGS split on whitespace (no shell quoting); empty when unset.
std::vector<std::string> env_flags();

// What a compiler is, as far as the binaries it produces are concerned.
struct CompilerIdentity {
  std::string command;        // the command that was probed
  std::string version;        // first line of `--version`
  std::string machine;        // `-dumpmachine`, e.g. x86_64-linux-gnu
  std::string native_target;  // what -march=native resolves to (GCC -march=, Clang target-cpu)
  std::string digest;         // XXH3-128 hex of the full probe outputs (version, machine, target)
};

// Probes `cxx` (split on whitespace) with --version, -dumpmachine and
// `-march=native -### -E`, whose compiler-proper command line shows what -march=native
// expands to on this CPU (GCC: -march=X, every -m flag and the cache-size params;
// Clang: target-cpu and the feature list); a compiler with neither form falls back to
// the predefined macros of -march=native. The three run at once. Each command is
// probed once per process; later calls return the cached result. Thread-safe.
// Throws CompileError naming the command when the compiler cannot be run.
std::shared_ptr<const CompilerIdentity> compiler_identity(const std::string& cxx);

// A fully resolved compiler invocation: program, flags, identity.
struct Toolchain {
  std::vector<std::string> cxx;    // program and any leading words ("ccache", "g++")
  std::vector<std::string> flags;  // base_flags() + env_flags() + extra_flags, in that order
  std::shared_ptr<const CompilerIdentity> identity;

  // The shell command that compiles `source` into `output` (arguments quoted).
  std::string command(const fs::path& source, const fs::path& output) const;
};

// Resolves options against the environment (STRATA_CXX, STRATA_CXXFLAGS) and probes
// the compiler (cached).
Toolchain resolve_toolchain(const CompileOptions& options = {});

// XXH3-128 hex (32 digits) of (kKernelCacheFormat, source, each flag, compiler identity).
std::string kernel_key(std::string_view source, const Toolchain& toolchain);

// A library loaded with dlopen(RTLD_NOW | RTLD_LOCAL), closed with dlclose when the last
// shared_ptr goes. Symbols taken from it are valid only while it is alive. Note that
// dlopen of a path that is already loaded returns the loaded object (reference counted),
// even if the file was replaced since.
class SharedLibrary {
 public:
  // Throws UserError naming the path and dlerror()'s reason.
  static std::shared_ptr<SharedLibrary> open(const fs::path& path);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // The address of `name`; throws UserError naming the symbol and the library.
  void* symbol(const std::string& name) const;
  // The address of `name`, or nullptr when the library does not define it.
  void* find_symbol(const std::string& name) const noexcept;
  // symbol() cast to a function type: lib.function<float(const float*, int64_t)>("spmm").
  template <class Fn>
  Fn* function(const std::string& name) const {
    return reinterpret_cast<Fn*>(symbol(name));
  }
  const fs::path& path() const { return path_; }

 private:
  SharedLibrary(void* handle, fs::path path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  fs::path path_;
};

// What one compiler run did.
struct CompileResult {
  std::string command;  // as run (without the 2>&1 redirection)
  std::string output;   // stdout + stderr (warnings on success)
  double compile_ms = 0;
};

// Runs the compiler on `source_file`, producing exactly `output_file` (the caller picks a
// temporary name and renames). On failure removes any partial output and throws
// CompileError. Thread-safe; counted by compiler_runs().
CompileResult compile_file(const fs::path& source_file, const fs::path& output_file, const Toolchain& toolchain);

struct CompiledLibrary {
  std::shared_ptr<SharedLibrary> library;
  std::string key;         // kernel_key() of the source and toolchain
  fs::path source_path;    // <work_dir>/<key>.cc
  fs::path library_path;   // <work_dir>/<key>.so
  std::string command;
  std::string compiler_output;
  double compile_ms = 0;
};

// Writes `source` to <work_dir>/<key>.cc, compiles it to a temporary, renames that to
// <work_dir>/<key>.so and loads it. Always runs the compiler: use KernelCache to reuse
// earlier results. Throws CompileError (the .cc is kept for inspection).
CompiledLibrary compile(std::string_view source, const CompileOptions& options = {});

// How many times this process has run the compiler on a kernel (probes not counted).
uint64_t compiler_runs();

// Quotes `arg` for /bin/sh when it holds anything but [A-Za-z0-9_./=+:,@%-].
std::string shell_quote(std::string_view arg);

}  // namespace strata::sc
