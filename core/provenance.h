// Provenance: what produced a result. The build (Strata's version, the commit the
// binaries were built from, the compiler) and the host (CPU model, cores), printed by
// `strata --version` and recorded in every run's header and summary, so a number in a
// log or a JSON file can be traced to the code and the machine that measured it.
#pragma once

#include <string>

namespace strata {

struct BuildInfo {
  std::string version;     // "0.1.0" (CMake's project version)
  std::string commit;      // "e142af3c0b1d", "+ -dirty" when tracked files differed; "unknown" outside git
  std::string build_type;  // "Release"
  std::string compiler;    // "GNU 12.2.0"
  // "strata 0.1.0 (commit e142af3c0b1d, Release, GNU 12.2.0)"
  std::string str() const;
};
const BuildInfo& build_info();

// The CPU's model name from /proc/cpuinfo ("Intel(R) Xeon(R) Processor"); "unknown"
// where there is none.
std::string host_cpu_model();

}  // namespace strata
