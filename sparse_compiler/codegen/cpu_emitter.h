// The C++ emitter: stage-III IR (after lower_schedule) -> C++17 source for the
// host compiler, with OpenMP for parallel loops and GCC vector extensions for
// vectorized code (the compiler picks the ISA from -march=native: a 16-lane float
// vector is one AVX-512 register). Register-scope locals accessed as a whole become
// plain variables, so accumulators live in registers.
//
// Each kernel becomes `extern "C" int strata_<name>(void* const* buffers,
// const int64_t* scalars)`, with buffers and scalars in parameter order (the
// uniform argument list), plus `strata_<name>_preprocess` with the same arguments
// when the kernel has a preprocess body. Several kernels go in one translation
// unit so one compiler invocation builds them all.
#pragma once

#include <string>
#include <vector>

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

// The symbol of a kernel's entry point and of its preprocess entry point.
std::string cpu_entry_symbol(const Kernel& k);
std::string cpu_preprocess_symbol(const Kernel& k);

// One translation unit holding the prelude and every kernel's entry points.
std::string emit_cpu_source(const std::vector<Kernel>& kernels);
// A digest of that translation unit's text: identifies a set of kernels' generated
// code however a compile splits it into units (tuning records key on it).
std::string cpu_source_digest(const std::vector<Kernel>& kernels);

}  // namespace strata::sc
