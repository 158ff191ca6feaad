// Errors. Two families, as in Halide and TVM:
//  - UserError: the input was wrong (a file, a config key, an argument). The message
//    names the input and says what was expected. Commands print it and exit non-zero.
//  - InternalError: an invariant of Strata itself broke. It is a bug, never the
//    user's fault; the message says which invariant.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace strata {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& msg) : std::runtime_error(msg) {}
};

// The machine has not the memory an input asks for (a buffer that does not fit, a
// failed allocation): a UserError, kept apart so a driver can add what it was doing
// (the config, the run and epoch) to the message. what() is the fact, then the
// generic remedy; a driver that knows a better remedy replaces it, using fact().
class OutOfMemoryError : public UserError {
 public:
  explicit OutOfMemoryError(const std::string& fact, const std::string& remedy = "")
      : UserError(remedy.empty() ? fact : fact + "; " + remedy), fact_(fact) {}
  const std::string& fact() const { return fact_; }

 private:
  std::string fact_;
};

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& msg) : std::logic_error(msg) {}
};

[[noreturn]] void throw_user_error(const std::string& msg);
[[noreturn]] void throw_out_of_memory(const std::string& fact, const std::string& remedy = "");
[[noreturn]] void throw_internal_error(const char* file, int line, const char* cond,
                                       const std::string& msg);

// Where in an input a problem sits: "cora.cites:17", "config.yaml:4:3 (model.hidden)".
struct SourceLocation {
  std::string file;
  int64_t line = 0;    // 1-based; 0 = whole file
  int64_t column = 0;  // 1-based; 0 = unknown
  std::string str() const;
};

}  // namespace strata

// User-facing check: STRATA_CHECK(rows > 0, "'{}': expected at least one row", path);
// The message is only formatted when the check fails.
#define STRATA_CHECK(cond, ...)                                      \
  do {                                                               \
    if (!(cond)) ::strata::throw_user_error(::fmt::format(__VA_ARGS__)); \
  } while (0)

#define STRATA_FAIL(...) ::strata::throw_user_error(::fmt::format(__VA_ARGS__))

// Internal invariant: STRATA_ASSERT(indptr.back() == nnz, "indptr ends at {} not {}", a, b);
#define STRATA_ASSERT(cond, ...)                                                        \
  do {                                                                                  \
    if (!(cond))                                                                        \
      ::strata::throw_internal_error(__FILE__, __LINE__, #cond, ::fmt::format(__VA_ARGS__)); \
  } while (0)

#define STRATA_UNREACHABLE(...) \
  ::strata::throw_internal_error(__FILE__, __LINE__, "unreachable", ::fmt::format(__VA_ARGS__))
