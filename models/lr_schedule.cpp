#include "models/lr_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace strata::nn {

const char* lr_schedule_name(LrScheduleKind k) {
  switch (k) {
    case LrScheduleKind::Constant:
      return "constant";
    case LrScheduleKind::Cosine:
      return "cosine";
    case LrScheduleKind::Step:
      return "step";
  }
  return "?";
}

double LrSchedule::lr_at(double base_lr, int64_t epoch, int64_t epochs) const {
  const int64_t done = std::max<int64_t>(0, epoch - 1);  // epochs finished before this one
  switch (kind) {
    case LrScheduleKind::Constant:
      return base_lr;
    case LrScheduleKind::Cosine:
      return base_lr * 0.5 *
             (1 + std::cos(std::numbers::pi * static_cast<double>(done) / std::max<int64_t>(1, epochs)));
    case LrScheduleKind::Step:
      return base_lr * std::pow(gamma, static_cast<double>(done / std::max<int64_t>(1, step_size)));
  }
  return base_lr;
}

std::string LrSchedule::describe(int64_t epochs) const {
  switch (kind) {
    case LrScheduleKind::Constant:
      return "";
    case LrScheduleKind::Cosine:
      return fmt::format(", lr cosine to 0 over {} epochs", epochs);
    case LrScheduleKind::Step:
      return fmt::format(", lr x{:g} every {} epochs", gamma, step_size);
  }
  return "";
}

}  // namespace strata::nn
