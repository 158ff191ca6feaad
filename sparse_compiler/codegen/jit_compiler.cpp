#include "sparse_compiler/codegen/jit_compiler.h"

#include <dlfcn.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>

#include "core/file_util.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/timer.h"

#ifndef STRATA_JIT_DEFAULT_CXX
#error "STRATA_JIT_DEFAULT_CXX must be defined by the build (CMake cache variable STRATA_JIT_CXX)"
#endif

namespace strata::sc {
namespace {

std::atomic<uint64_t> g_compiler_runs{0};

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> words;
  std::istringstream in{std::string(s)};
  for (std::string w; in >> w;) words.push_back(std::move(w));
  return words;
}

std::string join_quoted(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += shell_quote(w);
  }
  return out;
}

// Indents every line of `text` by `pad`, so a compiler's output reads as one block
// inside an error message.
std::string indent(std::string_view text, std::string_view pad = "    ") {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out += pad;
    out += text.substr(start, end - start);
    out += '\n';
    start = end + 1;
  }
  return out.empty() ? std::string(pad) + "(no output)\n" : out;
}

struct Captured {
  int status = -1;  // exit status; 128 + signal when killed; -1 when unknown
  std::string output;
};

// Runs each command through /bin/sh with popen (stdin from /dev/null, stderr merged into
// stdout), all at once, and captures everything each prints. popen rather than system():
// we need the diagnostics, and glibc's popen spawns with posix_spawn, which is safe in
// threaded programs. The "e" mode keeps our end of the pipe out of other threads'
// children. Reading the pipes one after the other cannot deadlock: each child blocks
// only on its own pipe, which we drain in turn.
std::vector<Captured> run_capture_all(const std::vector<std::string>& commands) {
  std::vector<Captured> results(commands.size());
  std::vector<std::FILE*> pipes(commands.size(), nullptr);
  for (size_t i = 0; i < commands.size(); ++i) {
    const std::string full = commands[i] + " </dev/null 2>&1";
    pipes[i] = ::popen(full.c_str(), "re");
    if (!pipes[i]) results[i].output = fmt::format("popen failed: {}", std::strerror(errno));
  }
  for (size_t i = 0; i < commands.size(); ++i) {
    if (!pipes[i]) continue;
    Captured& c = results[i];
    char buf[8192];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipes[i])) > 0) c.output.append(buf, n);
    const int st = ::pclose(pipes[i]);
    if (st == -1) {
      c.output += fmt::format("\n(cannot read the exit status: {})", std::strerror(errno));
    } else if (WIFEXITED(st)) {
      c.status = WEXITSTATUS(st);
    } else if (WIFSIGNALED(st)) {
      c.status = 128 + WTERMSIG(st);
    }
  }
  return results;
}

Captured run_capture(const std::string& command) { return std::move(run_capture_all({command})[0]); }

std::string first_line(std::string_view s) {
  const size_t end = s.find('\n');
  return std::string(s.substr(0, end));
}

std::string trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

[[noreturn]] void probe_failed(const std::string& cxx, const std::string& cmd, const Captured& c,
                               const std::string& what) {
  throw CompileError(fmt::format("the JIT compiler '{}' {} (set STRATA_CXX to a working C++ compiler)\n"
                                 "  command: {}\n  exit status: {}\n  output:\n{}",
                                 cxx, what, cmd, c.status, indent(c.output)),
                     cmd, c.output, fs::path(), c.status);
}

// Splits a -### command line into arguments, dropping the quotes the drivers add.
std::vector<std::string> driver_args(std::string_view line) {
  std::vector<std::string> args;
  std::string cur;
  bool quoted = false, any = false;
  for (char ch : line) {
    if (ch == '"') {
      quoted = !quoted;
      any = true;
    } else if (!quoted && (ch == ' ' || ch == '\t' || ch == '\r')) {
      if (any) args.push_back(std::move(cur));
      cur.clear();
      any = false;
    } else {
      cur += ch;
      any = true;
    }
  }
  if (any) args.push_back(std::move(cur));
  return args;
}

// `cxx -march=native -### -E ...` prints the command the driver would run for the
// compiler proper, where -march=native has already been expanded for this CPU.
//  GCC:   cc1plus ... -march=cooperlake -mmmx ... -mno-sse4a --param l1-cache-size=48 ...
//  Clang: clang -cc1 ... -target-cpu icelake-client -target-feature +avx512f ...
// Returns the target-defining arguments as one string ("" when neither form is found) and
// sets `cpu` to the -march= value or target-cpu.
std::string native_target_args(const std::string& text, std::string* cpu) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto args = driver_args(line);
    std::string out;
    // GCC: keep -m... options and the --param cache sizes native detection adds.
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].rfind("-march=", 0) == 0) *cpu = args[i].substr(7);
      if (args[i].rfind("-m", 0) == 0) out += args[i] + " ";
      if (args[i] == "--param" && i + 1 < args.size()) out += "--param " + args[++i] + " ";
    }
    if (!cpu->empty()) return "gcc " + out;
    // Clang: the cpu and the feature list (sorted; the order carries no meaning).
    std::vector<std::string> features;
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "-target-cpu") *cpu = args[i + 1];
      if (args[i] == "-target-feature") features.push_back(args[i + 1]);
    }
    if (!cpu->empty()) {
      std::sort(features.begin(), features.end());
      out = "clang " + *cpu;
      for (const auto& f : features) out.append(" ").append(f);
      return out;
    }
  }
  return {};
}

std::shared_ptr<const CompilerIdentity> probe(const std::string& cxx) {
  const auto words = split_words(cxx);
  if (words.empty()) {
    throw CompileError("no C++ compiler configured for generated kernels (set STRATA_CXX)", "", "", fs::path(), -1);
  }
  const std::string prog = join_quoted(words);
  auto id = std::make_shared<CompilerIdentity>();
  id->command = cxx;

  // The three probes run at once: together they cost about as much as the slowest.
  const std::vector<std::string> cmds = {prog + " --version", prog + " -dumpmachine",
                                         prog + " -march=native -### -E -x c++ /dev/null"};
  const std::vector<Captured> out = run_capture_all(cmds);
  if (out[0].status != 0) probe_failed(cxx, cmds[0], out[0], "cannot be run");
  if (out[1].status != 0) probe_failed(cxx, cmds[1], out[1], "does not answer -dumpmachine");
  id->version = first_line(out[0].output);
  id->machine = trim(out[1].output);

  // What -march=native means here: the part of the identity that keeps a cache shared by
  // machines with different CPUs from serving a binary for the wrong ISA.
  std::string cpu;
  std::string target = out[2].status == 0 ? native_target_args(out[2].output, &cpu) : std::string();
  if (!target.empty()) {
    id->native_target = cpu;
  } else {
    // Any other compiler: the ISA macros -march=native defines (__AVX512F__, ...).
    const std::string macro_cmd = prog + " -march=native -dM -E -x c++ /dev/null";
    const Captured macros = run_capture(macro_cmd);
    if (macros.status != 0) probe_failed(cxx, macro_cmd, macros, "cannot resolve -march=native");
    id->native_target = "native (predefined macros)";
    target = "macros\n" + macros.output;
  }

  Hasher h;
  h.add("strata compiler identity").add(out[0].output).add(id->machine).add(target);
  id->digest = h.digest().hex();
  log_debug("JIT compiler '{}': {} | {} | -march=native = {} | identity {}", cxx, id->version, id->machine,
            id->native_target, id->digest);
  return id;
}

// Kernels are built with -fopenmp, so loading one may be what loads the OpenMP runtime
// into the process (when the host itself does not link it). That runtime keeps its worker
// threads parked inside its own code after a parallel region; if dlclose of the last
// kernel then unloaded it, those threads would wake in unmapped memory. So any OpenMP
// runtime present after a load is pinned for the life of the process (RTLD_NODELETE on
// an object already loaded; RTLD_NOLOAD never loads anything). Kernels themselves still
// unload.
void pin_openmp_runtimes() {
  static const char* const kRuntimes[] = {"libgomp.so.1", "libomp.so.5", "libomp.so", "libiomp5.so"};
  static std::atomic<bool> pinned[std::size(kRuntimes)] = {};
  for (size_t i = 0; i < std::size(kRuntimes); ++i) {
    if (pinned[i].load(std::memory_order_acquire)) continue;
    // The pin holds one more reference that is never released; that is the point.
    if (::dlopen(kRuntimes[i], RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) != nullptr) {
      pinned[i].store(true, std::memory_order_release);
    }
  }
  ::dlerror();  // a runtime that is not loaded is not an error for the caller
}

}  // namespace

CompileError::CompileError(const std::string& message, std::string command, std::string output,
                           fs::path source_path, int exit_status)
    : UserError(message),
      command_(std::move(command)),
      output_(std::move(output)),
      source_path_(std::move(source_path)),
      exit_status_(exit_status) {}

std::string default_compiler() {
  if (auto v = env_value("STRATA_CXX")) return *v;
  return STRATA_JIT_DEFAULT_CXX;
}

const std::vector<std::string>& base_flags() {
  // -fno-math-errno: generated kernels never read errno, and without this flag GCC must
  //   keep sqrt/exp as library calls that may set it, which blocks vectorising edge
  //   softmax and norms. It changes no floating-point result (unlike -ffast-math).
  // -Wl,-z,defs: an unresolved symbol fails the link, with the linker's message, in
  //   compile() instead of later in dlopen, after the broken .so was already cached.
  static const std::vector<std::string> flags = {"-std=c++17", "-O3",    "-march=native",   "-fopenmp",
                                                 "-fPIC",      "-shared", "-fno-math-errno", "-Wl,-z,defs"};
  return flags;
}

std::vector<std::string> env_flags() {
  if (auto v = env_value("STRATA_CXXFLAGS")) return split_words(*v);
  return {};
}

std::shared_ptr<const CompilerIdentity> compiler_identity(const std::string& cxx) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const CompilerIdentity>> known;
  const std::string normalized = join_quoted(split_words(cxx));
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find(normalized);
  if (it != known.end()) return it->second;
  auto id = probe(cxx);  // a failed probe throws and is retried next time
  known.emplace(normalized, id);
  return id;
}

std::string Toolchain::command(const fs::path& source, const fs::path& output) const {
  std::vector<std::string> words = cxx;
  words.insert(words.end(), flags.begin(), flags.end());
  words.push_back(source.string());
  words.push_back("-o");
  words.push_back(output.string());
  return join_quoted(words);
}

Toolchain resolve_toolchain(const CompileOptions& options) {
  Toolchain tc;
  const std::string cxx = options.cxx.empty() ? default_compiler() : options.cxx;
  tc.identity = compiler_identity(cxx);
  tc.cxx = split_words(cxx);
  tc.flags = base_flags();
  for (auto& f : env_flags()) tc.flags.push_back(std::move(f));
  tc.flags.insert(tc.flags.end(), options.extra_flags.begin(), options.extra_flags.end());
  return tc;
}

std::string kernel_key(std::string_view source, const Toolchain& toolchain) {
  STRATA_ASSERT(toolchain.identity != nullptr, "kernel_key on a toolchain without a compiler identity");
  Hasher h;
  h.add("strata kernel").add_u64(kKernelCacheFormat).add(source).add_u64(toolchain.flags.size());
  for (const auto& f : toolchain.flags) h.add(f);
  h.add(toolchain.identity->digest);
  return h.digest().hex();
}

std::shared_ptr<SharedLibrary> SharedLibrary::open(const fs::path& path) {
  // An absolute path, so dlopen never searches LD_LIBRARY_PATH for a bare name.
  const fs::path abs = fs::absolute(path);
  ::dlerror();
  void* handle = ::dlopen(abs.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    STRATA_FAIL("cannot load kernel library '{}': {}", abs.string(), why ? why : "unknown dlopen error");
  }
  pin_openmp_runtimes();
  return std::shared_ptr<SharedLibrary>(new SharedLibrary(handle, abs));
}

SharedLibrary::~SharedLibrary() {
  if (handle_ && ::dlclose(handle_) != 0) {
    const char* why = ::dlerror();
    log_warn("dlclose of '{}' failed: {}", path_.string(), why ? why : "unknown error");
  }
}

void* SharedLibrary::find_symbol(const std::string& name) const noexcept {
  ::dlerror();
  return ::dlsym(handle_, name.c_str());
}

void* SharedLibrary::symbol(const std::string& name) const {
  ::dlerror();
  void* p = ::dlsym(handle_, name.c_str());
  if (!p) {
    const char* why = ::dlerror();
    STRATA_FAIL("symbol '{}' not found in kernel library '{}'{}{}", name, path_.string(), why ? ": " : "",
                why ? why : "");
  }
  return p;
}

CompileResult compile_file(const fs::path& source_file, const fs::path& output_file, const Toolchain& toolchain) {
  CompileResult r;
  r.command = toolchain.command(source_file, output_file);
  g_compiler_runs.fetch_add(1, std::memory_order_relaxed);
  Timer timer;
  Captured c = run_capture(r.command);
  r.compile_ms = timer.ms();
  r.output = std::move(c.output);
  std::error_code ec;
  if (c.status != 0 || !fs::is_regular_file(output_file, ec)) {
    fs::remove(output_file, ec);
    const std::string what = c.status == 0 ? "the compiler reported success but wrote no library"
                                           : fmt::format("compiler exit status {}", c.status);
    throw CompileError(fmt::format("generated kernel failed to compile ({})\n  command: {}\n  compiler output:\n{}"
                                   "  source kept at {}",
                                   what, r.command, indent(r.output), source_file.string()),
                       r.command, r.output, source_file, c.status);
  }
  if (!r.output.empty()) log_debug("compiler output for {}:\n{}", source_file.string(), indent(r.output));
  return r;
}

CompiledLibrary compile(std::string_view source, const CompileOptions& options) {
  const Toolchain tc = resolve_toolchain(options);
  CompiledLibrary out;
  out.key = kernel_key(source, tc);
  const fs::path dir = options.work_dir.empty() ? cache_root() / "jit" : options.work_dir;
  ensure_directory(dir);
  out.source_path = dir / (out.key + ".cc");
  out.library_path = dir / (out.key + ".so");
  write_file_atomic(out.source_path, source);

  const fs::path tmp = temporary_sibling(out.library_path);
  CompileResult r = compile_file(out.source_path, tmp, tc);
  std::error_code ec;
  fs::rename(tmp, out.library_path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    STRATA_FAIL("cannot rename '{}' to '{}': {}", tmp.string(), out.library_path.string(), ec.message());
  }
  out.library = SharedLibrary::open(out.library_path);
  out.command = std::move(r.command);
  out.compiler_output = std::move(r.output);
  out.compile_ms = r.compile_ms;
  return out;
}

uint64_t compiler_runs() { return g_compiler_runs.load(std::memory_order_relaxed); }

std::string shell_quote(std::string_view arg) {
  const bool safe = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch != '\0' && std::strchr("_./=+:,@%-", ch) != nullptr);
  });
  if (safe) return std::string(arg);
  std::string out = "'";
  for (char ch : arg) {
    if (ch == '\'') {
      out += "'\\''";
    } else {
      out += ch;
    }
  }
  return out + "'";
}

}  // namespace strata::sc
