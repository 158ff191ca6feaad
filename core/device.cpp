#include "core/device.h"

#include "core/error.h"

namespace strata {

std::string Device::str() const {
  return is_cpu() ? std::string("cpu") : fmt::format("cuda:{}", index);
}

Device parse_device(const std::string& s, const std::string& what) {
  if (s == "cpu") return Device::cpu();
  if (s == "cuda" || s == "gpu") return Device::cuda(0);
  if (s.rfind("cuda:", 0) == 0) {
    try {
      size_t used = 0;
      int i = std::stoi(s.substr(5), &used);
      if (used == s.size() - 5 && i >= 0) return Device::cuda(i);
    } catch (const std::exception&) {
    }
  }
  STRATA_FAIL("{}: unknown device '{}' (expected cpu, cuda or cuda:N)", what, s);
}

}  // namespace strata
