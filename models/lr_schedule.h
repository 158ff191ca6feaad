// Learning-rate schedules over a training run, with PyTorch's formulas so
// configs carry over (GraphGym's `optim.scheduler`): the rate of every update
// in epoch e (1-based) of E epochs, from the base rate optimizer.lr.
//   constant  lr
//   cosine    lr · (1 + cos(π (e − 1) / E)) / 2   (CosineAnnealingLR, T_max =
//   E, eta_min = 0) step      lr · γ^⌊(e − 1) / step_size⌋        (StepLR)
#pragma once

#include <cstdint>
#include <string>

namespace strata::nn {

enum class LrScheduleKind : uint8_t { Constant, Cosine, Step };
const char* lr_schedule_name(LrScheduleKind k);

struct LrSchedule {
  LrScheduleKind kind = LrScheduleKind::Constant;
  int64_t step_size = 50;  // step: epochs between decays
  double gamma = 0.5;      // step: the factor of each decay

  double lr_at(double base_lr, int64_t epoch, int64_t epochs) const;
  // "", ", lr cosine over 200 epochs", ", lr x0.5 every 50 epochs"
  std::string describe(int64_t epochs) const;
};

}  // namespace strata::nn
