// sparse_compiler/: Strata's embedded sparse compiler. Message-passing operators
// are written once as stage-I programs and compiled per graph.
//
//   ir/        axes (dense/sparse x fixed/variable), sparse buffers, sparse
//              iterations (stage I), loop IR (stages II, III), printer,
//              visitor/mutator, structural equality, names
//   passes/    one lowering pass per file: materialize_aux_buffers,
//              lower_sparse_iter (I -> II), hoist_binary_search,
//              lower_sparse_buffer (II -> III), simplify, rebase_loops,
//              hoist_invariant_ifs; codegen preparation: unroll_loops,
//              vectorize_loops, promote_registers; pipeline.h lists them in order.
//              Stage-I fusion of row programs (row_program.h): fuse_row_programs
//              (row loops, inlining, deferred normalisation, edge-loop fusion,
//              edge-buffer contraction) and online_softmax, which derive GAT's
//              fused attention from its score, softmax and aggregation
//   schedule/  primitives on stage-III loops (split, reorder, fuse, fission,
//              balance, parallel, static_tasks, vectorize, unroll, unroll_and_jam, bind,
//              cache_write/read, rfactor, transpose_sums, prefetch, stream_stores, fuse_nests,
//              partition_tasks, split_gather) and at stage I
//              (sparse_reorder, sparse_fuse, sparse_split)
//   formats/   format specs (csr, coo, dcsr and its column tiles, ell, bsr, hyb), format decomposition
//              as a stage-I rewrite, native parallel inspectors with edge-id maps
//              and owner tasks, ELL3D for RGCN, CPU schedules for decomposed kernels,
//              the shared-neighbour-pairs inspector (sums of column pairs many rows share)
//   codegen/   the C++ emitter (and CUDA when built), the JIT and its
//              content-addressed kernel cache, compiled kernels and their
//              arguments, the reference interpreter
//   tune/      graph fingerprints, the search space, the cost model, the tuner,
//              tuning records; RGMS-order and fused-attention tuners
//   ops/       the op programs (SpMM, SDDMM, max aggregation, GAT's steps, RGMS) and their front
//              doors (SpmmKernel, SddmmKernel, GatKernels, RgmsKernels over
//              RGMS's relational graph and its inspector; SharedPairsSpmm, SpMM over
//              shared pairs out of generated CSR kernels), default CPU schedules,
//              plans (and those an earlier run recorded in its kernels.json) and the
//              knobs an untuned plan takes from the graph's sizes,
//              the hand-written reference path
//
// Data flow: program (stage I) -> [fuse_row_programs | decompose_format] -> lower_to_loops (III) ->
// schedule -> lower_schedule -> emit -> compile (cached) -> bind to a graph's
// inspected arrays -> run.
#pragma once

#include "sparse_compiler/ops/attention.h"
#include "sparse_compiler/ops/max_aggregation.h"
#include "sparse_compiler/ops/rgms.h"
#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/tune/tuner.h"
