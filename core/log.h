// Logging with levels. The level comes from STRATA_LOG (error, warn, info, debug;
// default info) or set_log_level(). Messages go to stderr so that command output on
// stdout (tables, JSON) stays clean.
#pragma once

#include <fmt/format.h>

#include <string>

namespace strata {

enum class LogLevel : int { Error = 0, Warn = 1, Info = 2, Debug = 3 };

LogLevel log_level();
void set_log_level(LogLevel level);
// Parses "error", "warn", "info", "debug"; throws UserError naming `what`.
LogLevel parse_log_level(const std::string& s, const std::string& what = "log level");
void log_message(LogLevel level, const std::string& msg);

template <class... Args>
void log_error(fmt::format_string<Args...> f, Args&&... args) {
  log_message(LogLevel::Error, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void log_warn(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() >= LogLevel::Warn) log_message(LogLevel::Warn, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void log_info(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() >= LogLevel::Info) log_message(LogLevel::Info, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void log_debug(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() >= LogLevel::Debug) log_message(LogLevel::Debug, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace strata
