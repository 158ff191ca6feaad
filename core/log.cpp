#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "core/error.h"

namespace strata {
namespace {
std::atomic<int>& level_ref() {
  static std::atomic<int> level = [] {
    const char* env = std::getenv("STRATA_LOG");
    if (!env) return static_cast<int>(LogLevel::Info);
    try {
      return static_cast<int>(parse_log_level(env, "STRATA_LOG"));
    } catch (const UserError& e) {
      // A typo in an environment variable should not stop a run, nor go unnoticed.
      std::fprintf(stderr, "strata: warning: %s; logging at info\n", e.what());
      return static_cast<int>(LogLevel::Info);
    }
  }();
  return level;
}
}  // namespace

LogLevel log_level() { return static_cast<LogLevel>(level_ref().load(std::memory_order_relaxed)); }
void set_log_level(LogLevel level) { level_ref().store(static_cast<int>(level)); }

LogLevel parse_log_level(const std::string& s, const std::string& what) {
  if (s == "error") return LogLevel::Error;
  if (s == "warn" || s == "warning") return LogLevel::Warn;
  if (s == "info") return LogLevel::Info;
  if (s == "debug") return LogLevel::Debug;
  STRATA_FAIL("{}: unknown log level '{}' (expected error, warn, info or debug)", what, s);
}

void log_message(LogLevel level, const std::string& msg) {
  static std::mutex mu;
  static const char* tags[] = {"error", "warn", "info", "debug"};
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "[strata %s] %s\n", tags[static_cast<int>(level)], msg.c_str());
}

}  // namespace strata
