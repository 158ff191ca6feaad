// Thread count for OpenMP regions in Strata and in generated kernels (which share
// the process's OpenMP runtime).
#pragma once

namespace strata {

// Sets the number of threads; n <= 0 restores the default (all cores).
void set_num_threads(int n);
int num_threads();

}  // namespace strata
