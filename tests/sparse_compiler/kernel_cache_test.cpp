// Tests of the JIT layer (jit_compiler.h) and the kernel cache (kernel_cache.h). They run
// the real system compiler; each test works in its own temporary cache root, and the
// whole binary points STRATA_CACHE_DIR at a temporary directory so nothing reaches the
// user's ~/.cache.
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <latch>
#include <set>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "core/hash.h"
#include "core/log.h"
#include "sparse_compiler/codegen/jit_compiler.h"
#include "sparse_compiler/codegen/kernel_cache.h"
#include "tests/sparse_compiler/jit_test_kernels.h"
#include "tests/support/test_support.h"

extern char** environ;

namespace strata::sc {
namespace {

using testing::sum_expected;
using testing::sum_kernel;
using testing::SumFn;

// A fresh directory under the system temporary directory, removed with its contents.
class TempDir {
 public:
  explicit TempDir(const std::string& tag = "strata-jit-test") {
    std::string templ = (fs::temp_directory_path() / (tag + "-XXXXXX")).string();
    const char* made = ::mkdtemp(templ.data());
    if (!made) throw std::runtime_error("mkdtemp failed for " + templ);
    path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Points STRATA_CACHE_DIR at a temporary directory for the whole test binary, so that
// code reaching cache_root() (KernelCache::global(), compile() without work_dir) never
// writes into the user's cache.
class IsolatedCacheRoot : public ::testing::Environment {
 public:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>("strata-jit-cache-root");
    ::setenv("STRATA_CACHE_DIR", dir_->path().c_str(), 1);
  }
  void TearDown() override { dir_.reset(); }

 private:
  std::unique_ptr<TempDir> dir_;
};
[[maybe_unused]] ::testing::Environment* const kIsolatedCacheRoot =
    ::testing::AddGlobalTestEnvironment(new IsolatedCacheRoot);

// Sets an environment variable for one scope, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A compiler wrapper that appends each command line it gets to a log, then runs the real
// compiler, so a test can count compiler runs from outside the library (including runs
// in other processes). Its identity equals the real compiler's, so it shares its keys.
struct CountingCompiler {
  fs::path script, log;
  explicit CountingCompiler(const fs::path& dir) : script(dir / "counting-cxx.sh"), log(dir / "cxx.log") {
    std::string text = "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + shell_quote(log.string()) + "\nexec";
    std::istringstream words(default_compiler());
    for (std::string w; words >> w;) text.append(" ").append(shell_quote(w));
    text.append(" \"$@\"\n");
    write_file_atomic(script, text);
    fs::permissions(script, fs::perms::owner_all, fs::perm_options::add);
  }
  // Kernel compiles logged so far (identity probes are not: they have no -shared).
  int compiles() const {
    if (!fs::exists(log)) return 0;
    std::istringstream in(read_file(log));
    int n = 0;
    for (std::string line; std::getline(in, line);) n += line.find("-shared") != std::string::npos;
    return n;
  }
};

// File names in `dir`, sorted.
std::vector<std::string> list_dir(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> entry_files(const std::string& key) {
  return {key + ".cc", key + ".json", key + ".so"};
}

int64_t run_sum(const SharedLibrary& lib, int64_t n) { return lib.function<SumFn>("strata_test_sum")(n); }

// ---------------------------------------------------------------------------------------
// The compiler layer.

TEST(JitCompilerTest, CompilesLoadsAndCallsAnExternCFunction) {
  TempDir dir;
  CompileOptions options;
  options.work_dir = dir.path();
  const uint64_t runs_before = compiler_runs();
  const CompiledLibrary c = compile(sum_kernel(3), options);
  EXPECT_EQ(compiler_runs(), runs_before + 1);
  ASSERT_NE(c.library, nullptr);
  EXPECT_EQ(run_sum(*c.library, 1000), sum_expected(3, 1000));
  EXPECT_EQ(run_sum(*c.library, 0), 0);
  EXPECT_GT(c.compile_ms, 0);
  EXPECT_EQ(c.key.size(), 32u);
  // Content-addressed files, the source kept verbatim, no temporaries left behind.
  EXPECT_EQ(c.source_path, dir.path() / (c.key + ".cc"));
  EXPECT_EQ(c.library_path, dir.path() / (c.key + ".so"));
  EXPECT_EQ(read_file(c.source_path), sum_kernel(3));
  EXPECT_EQ(list_dir(dir.path()), (std::vector<std::string>{c.key + ".cc", c.key + ".so"}));
  EXPECT_EQ(c.library->path(), c.library_path);
  for (const auto& f : base_flags()) EXPECT_NE(c.command.find(f), std::string::npos) << f << " missing from " << c.command;
}

TEST(JitCompilerTest, ExtraFlagsReachTheCompiler) {
  TempDir dir;
  CompileOptions options;
  options.work_dir = dir.path();
  options.extra_flags = {"-DSTRATA_TEST_OFFSET=11"};
  const CompiledLibrary c = compile(sum_kernel(2), options);
  EXPECT_EQ(run_sum(*c.library, 10), sum_expected(2, 10, 11));
  EXPECT_NE(c.command.find("-DSTRATA_TEST_OFFSET=11"), std::string::npos) << c.command;
}

TEST(JitCompilerTest, IdentityIsProbedOnceAndNamesTheNativeTarget) {
  const auto a = compiler_identity(default_compiler());
  const auto b = compiler_identity(default_compiler());
  EXPECT_EQ(a.get(), b.get()) << "the identity must be computed once per process";
  EXPECT_EQ(a->digest.size(), 32u);
  EXPECT_FALSE(a->version.empty());
  EXPECT_FALSE(a->machine.empty());
  EXPECT_FALSE(a->native_target.empty());
  EXPECT_EQ(a->native_target.find("native"), std::string::npos)
      << "-march=native should resolve to a CPU name, got " << a->native_target;
}

TEST(JitCompilerTest, KeyDependsOnSourceFlagsAndCompilerIdentity) {
  const Toolchain tc = resolve_toolchain();
  const std::string k = kernel_key(sum_kernel(1), tc);
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(k.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(k, kernel_key(sum_kernel(1), resolve_toolchain()));
  EXPECT_NE(k, kernel_key(sum_kernel(2), tc));

  Toolchain flagged = tc;
  flagged.flags.push_back("-DX=1");
  EXPECT_NE(k, kernel_key(sum_kernel(1), flagged));
  Toolchain reordered = tc;  // the same flags in another order are another build
  std::swap(reordered.flags[0], reordered.flags[1]);
  EXPECT_NE(k, kernel_key(sum_kernel(1), reordered));

  // Another compiler, or the same one on a CPU where -march=native means something else.
  auto other = std::make_shared<CompilerIdentity>(*tc.identity);
  other->digest = hash_string("another machine").hex();
  Toolchain elsewhere = tc;
  elsewhere.identity = other;
  EXPECT_NE(k, kernel_key(sum_kernel(1), elsewhere));
}

TEST(JitCompilerTest, EnvironmentChoosesCompilerAndAddsFlags) {
  TempDir dir;
  CountingCompiler wrapper(dir.path());
  {
    ScopedEnv cxx("STRATA_CXX", wrapper.script.string());
    ScopedEnv flags("STRATA_CXXFLAGS", "-DSTRATA_TEST_OFFSET=5  -Wno-unused");
    EXPECT_EQ(default_compiler(), wrapper.script.string());
    EXPECT_EQ(env_flags(), (std::vector<std::string>{"-DSTRATA_TEST_OFFSET=5", "-Wno-unused"}));

    CompileOptions options;
    options.extra_flags = {"-DSTRATA_EXTRA=1"};
    const Toolchain tc = resolve_toolchain(options);
    EXPECT_EQ(tc.cxx, std::vector<std::string>{wrapper.script.string()});
    std::vector<std::string> want = base_flags();
    want.insert(want.end(), {"-DSTRATA_TEST_OFFSET=5", "-Wno-unused", "-DSTRATA_EXTRA=1"});
    EXPECT_EQ(tc.flags, want);

    options.work_dir = dir.path() / "work";
    const CompiledLibrary c = compile(sum_kernel(1), options);
    EXPECT_EQ(run_sum(*c.library, 4), sum_expected(1, 4, 5));
    EXPECT_EQ(wrapper.compiles(), 1);
  }
  EXPECT_NE(default_compiler(), wrapper.script.string());
}

TEST(JitCompilerTest, ShellQuoteSurvivesTheShell) {
  EXPECT_EQ(shell_quote("-O3"), "-O3");
  EXPECT_EQ(shell_quote("/usr/bin/g++"), "/usr/bin/g++");
  for (const std::string s : {"a b", "it's", "$HOME", "x;rm -rf y", "", "\"q\"", "back\\slash"}) {
    std::FILE* p = ::popen(("printf '%s' " + shell_quote(s)).c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[256];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    EXPECT_EQ(::pclose(p), 0);
    EXPECT_EQ(out, s) << "quoted as " << shell_quote(s);
  }
}

// The Clang branch of the identity probe (target-cpu and features from -###).
TEST(JitCompilerTest, ClangIdentityDiffersAndCompiles) {
  bool have_clang = false;
  if (auto path = env_value("PATH")) {
    std::istringstream dirs(*path);
    for (std::string d; std::getline(dirs, d, ':');) have_clang |= ::access((fs::path(d) / "clang++").c_str(), X_OK) == 0;
  }
  if (!have_clang) GTEST_SKIP() << "clang++ is not on PATH";
  const auto clang = compiler_identity("clang++");
  const auto gcc = compiler_identity(default_compiler());
  EXPECT_FALSE(clang->native_target.empty());
  if (gcc->version != clang->version) {
    EXPECT_NE(clang->digest, gcc->digest);
  }

  TempDir dir;
  CompileOptions options;
  options.cxx = "clang++";
  options.work_dir = dir.path();
  // Under scripts/sanitize.sh, STRATA_CXXFLAGS asks for GCC's sanitizers; Clang's runtime
  // cannot join GCC's in one process, so this library is built without them.
  if (!::strata::testing::kernel_sanitizer_flags().empty()) options.extra_flags.push_back("-fno-sanitize=all");
  // No OpenMP pragma here: a clang -fopenmp library pulls in libomp beside the test's libgomp.
  const CompiledLibrary c = compile("extern \"C\" long strata_clang_twice(long x) { return 2 * x; }\n", options);
  EXPECT_EQ(c.library->function<long(long)>("strata_clang_twice")(21), 42);
}

// Loading an OpenMP kernel may be what brings the OpenMP runtime into the process (this
// test binary does not link libgomp itself). Unloading the last kernel must not unload
// the runtime under its parked worker threads.
TEST(JitCompilerTest, OpenMpRuntimeOutlivesTheLastKernel) {
  if (compiler_identity(default_compiler())->version.find("clang") != std::string::npos) {
    GTEST_SKIP() << "the default compiler is Clang; this checks GCC's libgomp";
  }
  TempDir dir;
  CompileOptions options;
  options.work_dir = dir.path();
  {
    const CompiledLibrary c = compile(sum_kernel(17), options);
    EXPECT_EQ(run_sum(*c.library, 100000), sum_expected(17, 100000));
  }
  void* gomp = ::dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  ASSERT_NE(gomp, nullptr) << "libgomp was unloaded with the last kernel";
  ::dlclose(gomp);
  // Parallel regions keep working with kernels loaded and unloaded in between.
  for (int i = 0; i < 3; ++i) {
    const CompiledLibrary c = compile(sum_kernel(17), options);
    EXPECT_EQ(run_sum(*c.library, 1000 + i), sum_expected(17, 1000 + i));
  }
}

// ---------------------------------------------------------------------------------------
// Errors.

TEST(SharedLibraryErrorTest, MissingSymbolNamesSymbolAndLibrary) {
  TempDir dir;
  CompileOptions options;
  options.work_dir = dir.path();
  const CompiledLibrary c = compile(sum_kernel(1), options);
  EXPECT_EQ(c.library->find_symbol("strata_no_such_kernel"), nullptr);
  EXPECT_NE(c.library->find_symbol("strata_test_sum"), nullptr);
  strata::testing::expect_user_error([&] { c.library->symbol("strata_no_such_kernel"); },
                                     {"strata_no_such_kernel", c.library_path.string()});
}

TEST(SharedLibraryErrorTest, UnloadableFileIsNamed) {
  TempDir dir;
  const fs::path missing = dir.path() / "absent.so";
  strata::testing::expect_user_error([&] { SharedLibrary::open(missing); }, {missing.string()});
  const fs::path junk = dir.path() / "junk.so";
  write_file_atomic(junk, "this is not an ELF file");
  strata::testing::expect_user_error([&] { SharedLibrary::open(junk); }, {junk.string(), "cannot load"});
}

TEST(CompileErrorTest, UnknownCompilerIsNamed) {
  strata::testing::expect_user_error([] { compiler_identity("/nonexistent/strata-cxx"); },
                                     {"/nonexistent/strata-cxx", "STRATA_CXX"});
}

TEST(CompileErrorTest, MessageCarriesCommandCompilerOutputAndKeptSource) {
  TempDir root;
  KernelCache cache(root.path());
  const std::string bad = "extern \"C\" int strata_broken() { return strata_undeclared_identifier + 1; }\n";
  const std::string key = cache.key_for(bad);
  try {
    cache.get_or_compile(bad);
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    const std::string msg = e.what();
    const fs::path kept = cache.paths(key).source;
    EXPECT_EQ(e.source_path(), kept);
    EXPECT_NE(e.exit_status(), 0);
    EXPECT_NE(msg.find(e.command()), std::string::npos) << msg;
    EXPECT_NE(e.command().find(default_compiler()), std::string::npos) << e.command();
    EXPECT_NE(e.command().find("-fopenmp"), std::string::npos) << e.command();
    EXPECT_NE(e.command().find(kept.string()), std::string::npos) << e.command();
    EXPECT_NE(msg.find("strata_undeclared_identifier"), std::string::npos) << msg;
    EXPECT_NE(e.output().find("strata_undeclared_identifier"), std::string::npos) << e.output();
    EXPECT_NE(msg.find("source kept at " + kept.string()), std::string::npos) << msg;
    EXPECT_EQ(read_file(kept), bad);
    // Only the kept source: no library, manifest, lock or temporary.
    EXPECT_EQ(list_dir(cache.directory()), std::vector<std::string>{key + ".cc"});
  }
  // A CompileError is a UserError, and a second attempt fails the same way (not cached).
  strata::testing::expect_user_error([&] { cache.get_or_compile(bad); }, {"strata_undeclared_identifier"});
  EXPECT_EQ(cache.stats().compiles, 0u);
}

// -Wl,-z,defs: a kernel calling a function nobody defines fails at build time with the
// linker's message, instead of producing a cached library that dlopen then rejects.
TEST(CompileErrorTest, UndefinedSymbolFailsTheBuildNotTheLoad) {
  // scripts/sanitize.sh --thread links kernels with -z undefs: Clang's TSan runtime lives in
  // the executable, so every instrumented library has undefined __tsan_ symbols.
  if (::strata::testing::kernel_sanitizer_flags().find("-z,undefs") != std::string::npos)
    GTEST_SKIP() << "kernels linked with -z undefs (STRATA_CXXFLAGS='"
                 << ::strata::testing::kernel_sanitizer_flags() << "'): the -z defs check is off";
  TempDir root;
  KernelCache cache(root.path());
  const std::string src = "extern \"C\" int strata_not_defined_anywhere(int);\n"
                          "extern \"C\" int strata_calls_it(int x) { return strata_not_defined_anywhere(x); }\n";
  strata::testing::expect_user_error([&] { cache.get_or_compile(src); },
                                     {"strata_not_defined_anywhere", "source kept at"});
  EXPECT_FALSE(fs::exists(cache.paths(cache.key_for(src)).library));
}

// ---------------------------------------------------------------------------------------
// The cache.

TEST(KernelCacheTest, CompilesOnceThenHitsMemory) {
  TempDir root;
  KernelCache cache(root.path());
  const uint64_t runs = compiler_runs();
  const CacheResult first = cache.get_or_compile(sum_kernel(7));
  EXPECT_EQ(first.outcome, CacheOutcome::Compiled);
  EXPECT_GT(first.compile_ms, 0);
  EXPECT_GE(first.total_ms, first.compile_ms);
  EXPECT_EQ(run_sum(*first.library, 100), sum_expected(7, 100));

  const CacheResult second = cache.get_or_compile(sum_kernel(7));
  EXPECT_EQ(second.outcome, CacheOutcome::MemoryHit);
  EXPECT_EQ(second.library.get(), first.library.get());
  EXPECT_EQ(second.compile_ms, 0);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(compiler_runs(), runs + 1);
  EXPECT_EQ(cache.stats().compiles, 1u);
  EXPECT_EQ(cache.stats().memory_hits, 1u);

  // The entry on disk: exactly source, library and manifest; no lock, no temporaries.
  EXPECT_EQ(cache.directory(), root.path() / "kernels");
  EXPECT_EQ(list_dir(cache.directory()), entry_files(first.key));
  EXPECT_EQ(read_file(cache.paths(first.key).source), sum_kernel(7));
}

TEST(KernelCacheTest, MemoryHoldsWeakReferencesAndTheUnitsUsedLast) {
  TempDir root;
  KernelCache cache(root.path(), /*recent_units=*/1);
  EXPECT_EQ(cache.get_or_compile(sum_kernel(8)).outcome, CacheOutcome::Compiled);
  // Nobody holds the library, but it is the unit used last: still loaded.
  EXPECT_EQ(cache.get_or_compile(sum_kernel(8)).outcome, CacheOutcome::MemoryHit);
  // Another unit used since: the first was unloaded, and the next call loads it from disk.
  EXPECT_EQ(cache.get_or_compile(sum_kernel(7)).outcome, CacheOutcome::Compiled);
  const CacheResult again = cache.get_or_compile(sum_kernel(8));
  EXPECT_EQ(again.outcome, CacheOutcome::DiskHit);
  EXPECT_EQ(run_sum(*again.library, 10), sum_expected(8, 10));
  // Without recent units, only holders keep a library loaded.
  KernelCache bare(root.path(), 0);
  EXPECT_EQ(bare.get_or_compile(sum_kernel(8)).outcome, CacheOutcome::DiskHit);
  EXPECT_EQ(bare.get_or_compile(sum_kernel(8)).outcome, CacheOutcome::DiskHit);
}

TEST(KernelCacheTest, SecondInstanceHitsDiskWithoutRunningTheCompiler) {
  TempDir root;
  CountingCompiler wrapper(root.path());
  CompileOptions options;
  options.cxx = wrapper.script.string();
  std::string key;
  {
    KernelCache first(root.path());
    const CacheResult r = first.get_or_compile(sum_kernel(9), options);
    EXPECT_EQ(r.outcome, CacheOutcome::Compiled);
    key = r.key;
  }
  ASSERT_EQ(wrapper.compiles(), 1);

  // The manifest describes the library that is there.
  KernelCache second(root.path());
  const CacheEntryPaths p = second.paths(key);
  const auto manifest = nlohmann::json::parse(read_file(p.manifest));
  const std::string bytes = read_file(p.library);
  EXPECT_EQ(manifest.at("format").get<int>(), kKernelCacheFormat);
  EXPECT_EQ(manifest.at("key").get<std::string>(), key);
  EXPECT_EQ(manifest.at("library").at("size").get<uint64_t>(), bytes.size());
  EXPECT_EQ(manifest.at("library").at("xxh3").get<std::string>(), hash_string(bytes).hex());
  EXPECT_NE(manifest.at("compiler").at("command").get<std::string>().find(wrapper.script.string()), std::string::npos);
  EXPECT_GT(manifest.at("compile_ms").get<double>(), 0);

  const uint64_t runs = compiler_runs();
  const CacheResult hit = second.get_or_compile(sum_kernel(9), options);
  EXPECT_EQ(hit.outcome, CacheOutcome::DiskHit);
  EXPECT_EQ(hit.key, key);
  EXPECT_EQ(hit.compile_ms, 0);
  EXPECT_EQ(run_sum(*hit.library, 77), sum_expected(9, 77));
  EXPECT_EQ(compiler_runs(), runs);
  EXPECT_EQ(wrapper.compiles(), 1) << "a disk hit must not run the compiler";
  EXPECT_EQ(second.stats().disk_hits, 1u);
  EXPECT_EQ(second.stats().compiles, 0u);

  // The wrapper has the real compiler's identity, so plain options share the entry.
  EXPECT_EQ(second.get_or_compile(sum_kernel(9)).outcome, CacheOutcome::MemoryHit);
}

// Kernel-granular hits: a unit's members are found by their keys, from this
// instance's memory and from another instance's disk, without running the compiler;
// an index entry that holds no key, names a unit that is not there, or names a
// damaged unit is a miss.
TEST(KernelCacheTest, MembersOfAUnitAreFoundByTheirKeys) {
  TempDir root;
  const std::string m1(32, 'a'), m2(32, 'b'), absent(32, 'c');
  const fs::path index = root.path() / "kernels" / "members";
  std::string unit;
  {
    KernelCache first(root.path());
    const CacheResult r = first.get_or_compile(sum_kernel(5));
    unit = r.key;
    first.record_members({m1, m2}, unit);
    const CacheResult hit = first.find_member(m1);
    ASSERT_TRUE(hit.library);
    EXPECT_EQ(hit.outcome, CacheOutcome::MemoryHit);
    EXPECT_EQ(hit.library.get(), r.library.get());
    EXPECT_EQ(hit.key, unit);
    EXPECT_FALSE(first.find_member(absent).library);
  }
  EXPECT_EQ(read_file(index / m2), unit + "\n");

  KernelCache second(root.path());
  const uint64_t runs = compiler_runs();
  const CacheResult hit = second.find_member(m2);
  ASSERT_TRUE(hit.library);
  EXPECT_EQ(hit.outcome, CacheOutcome::DiskHit);
  EXPECT_EQ(hit.key, unit);
  EXPECT_EQ(run_sum(*hit.library, 50), sum_expected(5, 50));
  EXPECT_EQ(compiler_runs(), runs);
  EXPECT_EQ(second.stats().disk_hits, 1u);
  EXPECT_EQ(second.find_member(m1).outcome, CacheOutcome::MemoryHit);

  KernelCache third(root.path());
  write_file_atomic(index / absent, "not a key\n");
  EXPECT_FALSE(third.find_member(absent).library);
  write_file_atomic(index / absent, std::string(32, 'f') + "\n");
  EXPECT_FALSE(third.find_member(absent).library);
  // Replaced whole (a new inode: the copy `second` has loaded stays mapped).
  write_file_atomic(third.paths(unit).library, "junk");
  EXPECT_FALSE(third.find_member(m1).library);
  EXPECT_EQ(compiler_runs(), runs);
}

// Something other than a file in a cache file's place (a folder where the library or
// a member entry belongs, a file where the member folder belongs) is replaced by the
// next write: the command goes on, and the entry heals.
TEST(KernelCacheTest, FoldersAndFilesInTheWrongPlaceAreReplaced) {
  TempDir root;
  std::string unit;
  {
    KernelCache first(root.path());
    unit = first.get_or_compile(sum_kernel(6)).key;
  }
  const CacheEntryPaths p = KernelCache(root.path()).paths(unit);
  fs::remove(p.library);
  fs::create_directories(p.library / "junk");
  {
    KernelCache second(root.path());
    const CacheResult r = second.get_or_compile(sum_kernel(6));
    EXPECT_EQ(r.outcome, CacheOutcome::Compiled);
    EXPECT_EQ(run_sum(*r.library, 40), sum_expected(6, 40));
  }
  EXPECT_TRUE(fs::is_regular_file(p.library));
  EXPECT_EQ(KernelCache(root.path()).get_or_compile(sum_kernel(6)).outcome, CacheOutcome::DiskHit);

  // The member index: a folder in a member's place, then a file in the index folder's place.
  const std::string m(32, 'd');
  const fs::path index = root.path() / "kernels" / "members";
  fs::create_directories(index / m / "junk");
  KernelCache third(root.path());
  third.record_members({m}, unit);
  EXPECT_EQ(read_file(index / m), unit + "\n");
  fs::remove_all(index);
  write_file_atomic(index, "not a folder");
  KernelCache fourth(root.path());
  fourth.record_members({m}, unit);
  EXPECT_EQ(read_file(index / m), unit + "\n");
}

TEST(KernelCacheTest, ChangedSourceOrFlagsMiss) {
  TempDir root;
  KernelCache cache(root.path());
  const CacheResult base = cache.get_or_compile(sum_kernel(4));
  const CacheResult other_source = cache.get_or_compile(sum_kernel(5));
  CompileOptions flagged;
  flagged.extra_flags = {"-DSTRATA_TEST_OFFSET=3"};
  const CacheResult other_flags = cache.get_or_compile(sum_kernel(4), flagged);

  EXPECT_EQ(base.outcome, CacheOutcome::Compiled);
  EXPECT_EQ(other_source.outcome, CacheOutcome::Compiled);
  EXPECT_EQ(other_flags.outcome, CacheOutcome::Compiled);
  EXPECT_EQ(std::set<std::string>({base.key, other_source.key, other_flags.key}).size(), 3u);
  EXPECT_EQ(run_sum(*base.library, 50), sum_expected(4, 50));
  EXPECT_EQ(run_sum(*other_source.library, 50), sum_expected(5, 50));
  EXPECT_EQ(run_sum(*other_flags.library, 50), sum_expected(4, 50, 3));
  EXPECT_EQ(cache.get_or_compile(sum_kernel(4), flagged).outcome, CacheOutcome::MemoryHit);
  EXPECT_EQ(list_dir(cache.directory()).size(), 9u);
}

TEST(KernelCacheTest, ThreadsAskingForOneKeyShareOneCompile) {
  TempDir root;
  KernelCache cache(root.path());
  const uint64_t runs = compiler_runs();
  constexpr int kThreads = 4;
  std::vector<CacheResult> results(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      results[t] = cache.get_or_compile(sum_kernel(13));
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(compiler_runs(), runs + 1);
  int compiled = 0;
  for (const auto& r : results) {
    compiled += r.outcome == CacheOutcome::Compiled;
    EXPECT_EQ(r.library.get(), results[0].library.get());
  }
  EXPECT_EQ(compiled, 1);
  EXPECT_EQ(run_sum(*results[0].library, 9), sum_expected(13, 9));
}

TEST(KernelCacheTest, ThreadsWaitingOnAFailingCompileAllGetTheError) {
  TempDir root;
  KernelCache cache(root.path());
  const std::string bad = "extern \"C\" int f() { return strata_nope_" + std::to_string(::getpid()) + "; }\n";
  constexpr int kThreads = 3;
  std::atomic<int> errors{0};
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      try {
        cache.get_or_compile(bad);
      } catch (const CompileError& e) {
        errors += std::string(e.what()).find("strata_nope_") != std::string::npos;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), kThreads);
}

TEST(KernelCacheTest, StaleTemporariesOfACrashedBuildAreRemoved) {
  TempDir root;
  KernelCache cache(root.path());
  const std::string key = cache.key_for(sum_kernel(6));
  ensure_directory(cache.directory());
  // What a process killed mid-build leaves: a partial compiler output and a .cc temporary.
  const CacheEntryPaths p = cache.paths(key);
  write_file_atomic(p.library.string() + ".tmp.999999.0", "partial ELF");
  write_file_atomic(p.source.string() + ".tmp.999999.1", "partial source");
  const CacheResult r = cache.get_or_compile(sum_kernel(6));
  EXPECT_EQ(r.outcome, CacheOutcome::Compiled);
  EXPECT_EQ(run_sum(*r.library, 3), sum_expected(6, 3));
  EXPECT_EQ(list_dir(cache.directory()), entry_files(key));
}

// A folder where the lock file belongs is cleared like any other folder in a cache
// file's place; the entry builds, and no lock is left behind.
TEST(KernelCacheTest, AFolderAtTheLockFileIsReplaced) {
  TempDir root;
  KernelCache cache(root.path());
  const std::string key = cache.key_for(sum_kernel(12));
  fs::create_directories(cache.paths(key).lock / "junk");
  const CacheResult r = cache.get_or_compile(sum_kernel(12));
  EXPECT_EQ(r.outcome, CacheOutcome::Compiled);
  EXPECT_EQ(run_sum(*r.library, 21), sum_expected(12, 21));
  EXPECT_EQ(list_dir(cache.directory()), entry_files(key));
}

// The cache folder removed while a kernel compiles (a user clearing ~/.cache/strata
// under a running command): the build is repeated in a new folder, once, with a
// warning, and the entry is whole afterwards. A compiler wrapper removes the folder at
// its first kernel compile, then runs the real compiler, whose output has nowhere to go.
TEST(KernelCacheTest, ACacheFolderRemovedDuringTheBuildIsRecreatedAndTheBuildRepeated) {
  TempDir root;
  TempDir tools;
  CountingCompiler real(tools.path());
  const fs::path marker = tools.path() / "removed-once";
  const fs::path script = tools.path() / "removing-cxx.sh";
  write_file_atomic(script, "#!/bin/sh\ncase \"$*\" in *-shared*)\n  if [ ! -e " + shell_quote(marker.string()) +
                                " ]; then touch " + shell_quote(marker.string()) + "; rm -rf " +
                                shell_quote((root.path() / "kernels").string()) + "; fi;;\nesac\nexec " +
                                shell_quote(real.script.string()) + " \"$@\"\n");
  fs::permissions(script, fs::perms::owner_all, fs::perm_options::add);
  CompileOptions options;
  options.cxx = script.string();
  KernelCache cache(root.path());
  const LogLevel saved = log_level();
  set_log_level(LogLevel::Warn);
  ::testing::internal::CaptureStderr();
  CacheResult r;
  try {
    r = cache.get_or_compile(sum_kernel(13), options);
  } catch (...) {
    ::testing::internal::GetCapturedStderr();
    set_log_level(saved);
    throw;
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  set_log_level(saved);
  EXPECT_EQ(r.outcome, CacheOutcome::Compiled);
  EXPECT_EQ(run_sum(*r.library, 8), sum_expected(13, 8));
  EXPECT_TRUE(fs::exists(marker)) << "the wrapper never removed the folder";
  EXPECT_EQ(real.compiles(), 2);
  EXPECT_NE(log.find("disappeared while a kernel was being built; building it again"), std::string::npos) << log;
  EXPECT_EQ(list_dir(cache.directory()), entry_files(r.key));
  EXPECT_EQ(KernelCache(root.path()).get_or_compile(sum_kernel(13), options).outcome, CacheOutcome::DiskHit);
}

TEST(KernelCacheTest, GlobalCacheLivesUnderStrataCacheDir) {
  const auto env = env_value("STRATA_CACHE_DIR");
  ASSERT_TRUE(env.has_value());
  EXPECT_EQ(KernelCache::global().directory(), fs::path(*env) / "kernels");
  EXPECT_EQ(&KernelCache::global(), &KernelCache::global());
}

// ---------------------------------------------------------------------------------------
// A damaged entry is detected, logged naming the file, rebuilt and then served.

enum class Damage { TruncatedLibrary, FlippedLibraryByte, MissingLibrary, GarbageManifest, ManifestOfOtherKey,
                    MissingManifest };

std::string damage_name(Damage d) {
  switch (d) {
    case Damage::TruncatedLibrary: return "TruncatedLibrary";
    case Damage::FlippedLibraryByte: return "FlippedLibraryByte";
    case Damage::MissingLibrary: return "MissingLibrary";
    case Damage::GarbageManifest: return "GarbageManifest";
    case Damage::ManifestOfOtherKey: return "ManifestOfOtherKey";
    case Damage::MissingManifest: return "MissingManifest";
  }
  return "?";
}

class KernelCacheDamageTest : public ::testing::TestWithParam<Damage> {
 protected:
  // One pristine entry per suite, copied into a fresh root by each test.
  static void SetUpTestSuite() {
    pristine_ = new TempDir("strata-jit-pristine");
    KernelCache cache(pristine_->path());
    key_ = cache.get_or_compile(sum_kernel(21)).key;
  }
  static void TearDownTestSuite() {
    delete pristine_;
    pristine_ = nullptr;
  }
  static TempDir* pristine_;
  static std::string key_;
};
TempDir* KernelCacheDamageTest::pristine_ = nullptr;
std::string KernelCacheDamageTest::key_;

TEST_P(KernelCacheDamageTest, IsDetectedLoggedAndRebuilt) {
  TempDir root;
  fs::copy(pristine_->path() / "kernels", root.path() / "kernels", fs::copy_options::recursive);
  KernelCache cache(root.path());
  const CacheEntryPaths p = cache.paths(key_);
  ASSERT_TRUE(fs::exists(p.library) && fs::exists(p.manifest));

  fs::path named;  // the file the warning must name
  switch (GetParam()) {
    case Damage::TruncatedLibrary:
      fs::resize_file(p.library, fs::file_size(p.library) / 2);
      named = p.library;
      break;
    case Damage::FlippedLibraryByte: {
      std::string bytes = read_file(p.library);
      bytes[bytes.size() / 2] ^= 0x5a;
      write_file_atomic(p.library, bytes);
      named = p.library;
      break;
    }
    case Damage::MissingLibrary:
      fs::remove(p.library);
      named = p.library;
      break;
    case Damage::GarbageManifest:
      write_file_atomic(p.manifest, "{\"format\": 1, \"key\": ");
      named = p.manifest;
      break;
    case Damage::ManifestOfOtherKey: {
      auto m = nlohmann::json::parse(read_file(p.manifest));
      m["key"] = std::string(32, '0');
      write_file_atomic(p.manifest, m.dump());
      named = p.manifest;
      break;
    }
    case Damage::MissingManifest:  // a crash between renaming the .so and writing the manifest
      fs::remove(p.manifest);
      named = p.library;
      break;
  }

  const LogLevel saved = log_level();
  set_log_level(LogLevel::Warn);
  ::testing::internal::CaptureStderr();
  CacheResult r;
  try {
    r = cache.get_or_compile(sum_kernel(21));
  } catch (...) {
    ::testing::internal::GetCapturedStderr();
    set_log_level(saved);
    throw;
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  set_log_level(saved);

  EXPECT_EQ(r.outcome, CacheOutcome::Compiled);
  EXPECT_EQ(run_sum(*r.library, 1000), sum_expected(21, 1000));
  EXPECT_EQ(cache.stats().rebuilt_entries, 1u);
  EXPECT_NE(log.find("[strata warn]"), std::string::npos) << log;
  EXPECT_NE(log.find(named.string()), std::string::npos) << "the warning should name " << named << ":\n" << log;
  EXPECT_EQ(list_dir(cache.directory()), entry_files(key_));

  // The rebuilt entry verifies: another instance loads it from disk.
  r = {};
  KernelCache fresh(root.path());
  const CacheResult hit = fresh.get_or_compile(sum_kernel(21));
  EXPECT_EQ(hit.outcome, CacheOutcome::DiskHit);
  EXPECT_EQ(fresh.stats().rebuilt_entries, 0u);
  EXPECT_EQ(run_sum(*hit.library, 5), sum_expected(21, 5));
}

INSTANTIATE_TEST_SUITE_P(, KernelCacheDamageTest,
                         ::testing::Values(Damage::TruncatedLibrary, Damage::FlippedLibraryByte, Damage::MissingLibrary,
                                           Damage::GarbageManifest, Damage::ManifestOfOtherKey,
                                           Damage::MissingManifest),
                         [](const auto& info) { return damage_name(info.param); });

// ---------------------------------------------------------------------------------------
// Several processes racing on one key, on a fresh root.

TEST(KernelCacheSlowTest, ProcessesRacingOnOneKeyCompileOnceAndAllSucceed) {
  TempDir root;
  CountingCompiler wrapper(root.path());
  constexpr int kProcs = 6;
  const int64_t multiplier = 1000 + ::getpid() % 1000, n = 12345;
  const std::string helper = STRATA_JIT_RACE_HELPER;
  const std::string args[] = {helper, root.path().string(), wrapper.script.string(), std::to_string(multiplier),
                              std::to_string(n)};
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  std::vector<pid_t> pids;
  for (int i = 0; i < kProcs; ++i) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string out = (root.path() / ("out." + std::to_string(i))).string();
    const std::string err = (root.path() / ("err." + std::to_string(i))).string();
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, helper.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ASSERT_EQ(rc, 0) << "posix_spawn " << helper << ": " << std::strerror(rc);
    pids.push_back(pid);
  }

  int compiled = 0, disk_hits = 0;
  for (int i = 0; i < kProcs; ++i) {
    int status = 0;
    ASSERT_EQ(::waitpid(pids[i], &status, 0), pids[i]);
    const std::string out = read_file(root.path() / ("out." + std::to_string(i)));
    const std::string err = read_file(root.path() / ("err." + std::to_string(i)));
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "helper " << i << " failed (status " << status << ")\nstdout: " << out << "\nstderr: " << err;
    EXPECT_NE(out.find(" " + std::to_string(sum_expected(multiplier, n))), std::string::npos) << out;
    compiled += out.rfind("compiled ", 0) == 0;
    disk_hits += out.rfind("disk-hit ", 0) == 0;
  }
  EXPECT_EQ(compiled, 1) << "the per-key lock should let exactly one process compile";
  EXPECT_EQ(disk_hits, kProcs - 1);
  EXPECT_EQ(wrapper.compiles(), 1);

  KernelCache cache(root.path());
  CompileOptions options;
  options.cxx = wrapper.script.string();
  const std::string key = cache.key_for(sum_kernel(multiplier), options);
  EXPECT_EQ(list_dir(cache.directory()), entry_files(key)) << "one entry, no temporaries, no lock";
  EXPECT_EQ(cache.get_or_compile(sum_kernel(multiplier), options).outcome, CacheOutcome::DiskHit);
}

}  // namespace
}  // namespace strata::sc
