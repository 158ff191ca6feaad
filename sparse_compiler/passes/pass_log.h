// Instrumentation for pass pipelines: STRATA_DUMP_IR=1 prints the kernel after
// every pass that changed it (to stderr); STRATA_TIME_PASSES=1 prints a table of
// per-pass times when the log is destroyed (Halide's LoweringLogger, TVM's
// PassTimingInstrument).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/timer.h"
#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

class PassLog {
 public:
  PassLog();
  ~PassLog();
  // Runs `pass` on k, records its time, dumps the result when it changed.
  template <class F>
  Kernel run(const char* name, const Kernel& k, F&& pass) {
    Timer t;
    Kernel out = pass(k);
    record(name, t.ms(), k, out);
    return out;
  }

 private:
  void record(const char* name, double ms, const Kernel& before, const Kernel& after);
  bool dump_, time_;
  std::vector<std::pair<std::string, double>> times_;
};

}  // namespace strata::sc
