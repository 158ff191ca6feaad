#include "core/error.h"

namespace strata {

void throw_user_error(const std::string& msg) { throw UserError(msg); }
void throw_out_of_memory(const std::string& fact, const std::string& remedy) {
  throw OutOfMemoryError(fact, remedy);
}

void throw_internal_error(const char* file, int line, const char* cond, const std::string& msg) {
  throw InternalError(fmt::format("internal error at {}:{}: check '{}' failed: {}", file, line,
                                  cond, msg));
}

std::string SourceLocation::str() const {
  std::string s = file;
  if (line > 0) s += fmt::format(":{}", line);
  if (line > 0 && column > 0) s += fmt::format(":{}", column);
  return s;
}

}  // namespace strata
