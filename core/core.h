// core/: the runtime's foundations, used by every other folder.
//   tensor.h        Tensor (dtype, shape, device, 64-byte aligned storage, Eigen views)
//   buffer_pool.h   the pool host tensors of 64 KiB and more are recycled through
//   host_memory.h   host allocation: huge-page advice, refusing what the process may not have
//   memory_limits.h what the process may still allocate: the machine, its memory cgroup,
//                   STRATA_MEMORY_LIMIT
//   graph.h         Graph (CSR, 64-bit offsets, int32/int64 indices, edge ids, transpose)
//   hetero_graph.h  HeteroGraph (typed nodes and relations, flattened view)
//   error.h         UserError / InternalError and the STRATA_CHECK / STRATA_ASSERT macros
//   cuda_driver.h   the CUDA driver API loaded at run time (no link-time libcuda)
//   rng.h, timer.h, log.h, hash.h, file_util.h, parallel.h   seeded RNG, timing,
//                   logging, content hashing, atomic files and cache dir, thread count
//   fast_math.h     exp and expm1 over 16 floats in vector arithmetic (element-wise ops)
//   provenance.h    the build (version, commit, compiler) and host CPU behind a result
//   autograd.h      the tape, Var and the differentiable ops (autograd_ops.h)
//   neighbor_sampler.h  sampled blocks for mini-batch training
//   staged_directory.h  output folders that appear whole or not at all
#pragma once

#include "core/device.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/file_util.h"
#include "core/graph.h"
#include "core/hash.h"
#include "core/hetero_graph.h"
#include "core/log.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "core/timer.h"
