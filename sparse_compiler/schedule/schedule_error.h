// The error a schedule primitive (or the lowering of a scheduled loop) raises when
// a request is illegal; its message names the primitive, the loop and the reason.
#pragma once

#include "core/error.h"

namespace strata::sc {

class ScheduleError : public UserError {
 public:
  using UserError::UserError;
};

#define STRATA_SCHED_CHECK(cond, ...)                                                    \
  do {                                                                                   \
    if (!(cond)) throw ::strata::sc::ScheduleError(::fmt::format(__VA_ARGS__));         \
  } while (0)

}  // namespace strata::sc
