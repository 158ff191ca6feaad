#include "core/provenance.h"

#include <fmt/format.h>

#include <fstream>

#include "core/build_info_values.h"  // generated: STRATA_BUILD_COMMIT

namespace strata {

std::string BuildInfo::str() const {
  return fmt::format("strata {} (commit {}, {}, {})", version, commit, build_type, compiler);
}

const BuildInfo& build_info() {
  static const BuildInfo info{STRATA_VERSION_STRING, STRATA_BUILD_COMMIT, STRATA_BUILD_TYPE, STRATA_COMPILER};
  return info;
}

std::string host_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "unknown" : line.substr(start);
  }
  return "unknown";
}

}  // namespace strata
