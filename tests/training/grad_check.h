// Central finite differences for autograd tests.
//
// For an op f(inputs) -> Y, the check draws a random R of Y's shape, takes
// L = Σ R ⊙ Y (accumulated in float64), and compares the tape's gradient of L with
// respect to each differentiable input (backward seeded with R) against
// (L(x + eps·e_k) - L(x - eps·e_k)) / 2eps for every element k (or a seeded sample
// of at most `max_elements` of them).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "core/autograd.h"
#include "core/rng.h"

namespace strata::testing {

using GradFn = std::function<ag::Var(ag::Tape&, const std::vector<ag::Var>&)>;

struct GradCheckOptions {
  double eps = 1e-2;
  double atol = 5e-4;
  double rtol = 3e-3;
  int64_t max_elements = 400;
  uint64_t seed = 7;
};

// Runs the check; `differentiable[i]` says whether inputs[i] is a parameter.
// Returns the number of elements compared (so tests can assert it is not zero).
int64_t check_gradients(const GradFn& f, const std::vector<Tensor>& inputs, const std::vector<bool>& differentiable,
                        const GradCheckOptions& options = {});

// The same check for the parameters of a layer or model: `f` builds the output from
// the current parameter values, which the check perturbs in place (and restores).
int64_t check_parameter_gradients(const std::function<ag::Var(ag::Tape&)>& f, const std::vector<ag::Var>& params,
                                  const GradCheckOptions& options = {});

// A float32 tensor with entries uniform in ±[lo, hi] (random sign): values kept away
// from 0 so kinks (relu at 0) are never within eps of a sample.
Tensor away_from_zero(Shape shape, double lo, double hi, Rng& rng);

}  // namespace strata::testing
