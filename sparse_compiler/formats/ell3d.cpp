#include "sparse_compiler/formats/ell3d.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/schedule/schedule_error.h"

namespace strata::sc {

Kernel decompose_ell3d(const Kernel& program, int B) {
  program.require_stage(Stage::Coordinate, "decompose_ell3d");
  const auto* it = program.body.as<SparseIterationNode>();
  STRATA_SCHED_CHECK(it && it->iters.size() == 4, "decompose_ell3d: kernel {} is not the RGMS aggregation", program.name);
  const IterVar &r = it->iters[0], &i = it->iters[1], &j = it->iters[2], &f = it->iters[3];
  STRATA_SCHED_CHECK(i.axis->parent == r.axis && j.axis->parent == i.axis,
                     "decompose_ell3d: sp_iter {} does not iterate relation -> row -> source", it->name);
  const Axis R = r.axis, I = i.axis, J = j.axis, F = f.axis;
  const DType idt = J->idtype;
  const SparseBuffer *Hp = program.find_buffer("H"), *Ap = program.find_buffer("A"), *Xp = program.find_buffer("X");
  STRATA_SCHED_CHECK(Hp && Ap && Xp, "decompose_ell3d: kernel {} lacks buffers H, A or X", program.name);
  // Flat views: pairs of H, non-zeros of A.
  const Axis Pairs = dense_fixed("Pairs", I->nnz), E = dense_fixed("E", J->nnz);
  const SparseBuffer H = sparse_buffer("H", {Pairs, F}, DType::F32), A = sparse_buffer("A", {E}, DType::F32);
  const SparseBuffer X = *Xp;
  Kernel out = program;
  out.name = program.name + fmt::format("_ell3d_B{}", B);
  std::vector<Stmt> iterations;
  iterations.push_back(sparse_iteration("ell3d_init", {{"ip", Pairs, false}, {"fp", F, false}}, Stmt(),
                                        sparse_store(H, {var("ip"), var("fp")}, make_float(0))));
  std::vector<Axis> axes = {R, F, Pairs, E, (*Xp)->axes[0]};
  std::vector<SparseBuffer> buffers = {H, A, X};
  std::vector<Param> params;
  for (const auto& p : program.params)
    if (p.name != "rel_rows" && p.name != "row_ptr" && p.name != "cols") params.push_back(p);
  for (int b = 0; b <= B; ++b) {
    const std::string p = fmt::format("e{}", b);
    const int64_t w = int64_t{1} << b;
    Axis P = sparse_variable(p + "_P", R, I->nnz, var(p + "_n"), p + "_rptr", p + "_pairs", idt, true);
    Axis C = sparse_fixed(p + "_C", P, J->length, w, p + "_cols", idt, false);
    SparseBuffer eid = sparse_buffer(p + "_eid", {R, P, C}, idt);
    axes.push_back(P);
    axes.push_back(C);
    buffers.push_back(eid);
    const Expr vr = var(p + "_r"), vi = var(p + "_i"), vj = var(p + "_j"), vf = var(p + "_f");
    const Expr e = cast(Type::i64(), sparse_load(eid, {vr, vi, vj}));
    // H[pair] += a * X[source], padding (eid < 0) adds nothing: the product is
    // selected away, not multiplied by a zero weight (a padding slot repeats a real
    // source, and 0 * X[source] is NaN where X[source] is infinite).
    const Expr real = ge(e, make_int(0));
    const Expr a = select(real, sparse_load(A, {e}), make_float(0));  // no read at edge id -1
    const Expr term = select(real, mul(a, sparse_load(X, {vj, vf})), make_float(0));
    Stmt body = sparse_store(H, {vi, vf}, add(sparse_load(H, {vi, vf}), term));
    iterations.push_back(sparse_iteration(
        "ell3d_" + p, {{p + "_r", R, false}, {p + "_i", P, false}, {p + "_j", C, true}, {p + "_f", F, false}}, Stmt(), body));
    for (const char* arr : {"_rptr"}) params.push_back(Param::buffer(p + arr, DType::I64));
    for (const char* arr : {"_pairs", "_cols", "_eid"}) params.push_back(Param::buffer(p + arr, idt));
    params.push_back(Param::buffer(p + "_tasks", DType::I64));
    params.push_back(Param::scalar(p + "_n"));
  }
  params.push_back(Param::buffer("task_pairs", DType::I64));
  params.push_back(Param::scalar("num_tasks"));
  out.axes = axes;
  out.buffers = buffers;
  out.params = params;
  out.body = seq(iterations);
  return out;
}

int64_t InspectedEll3d::slots() const {
  int64_t s = 0;
  for (const auto& b : buckets) s += b.slots;
  return s;
}

void InspectedEll3d::bind(KernelArgs& a) const {
  for (size_t b = 0; b < buckets.size(); ++b) {
    const std::string p = fmt::format("e{}", b);
    a.buffer(p + "_rptr", buckets[b].rptr).buffer(p + "_pairs", buckets[b].pairs).buffer(p + "_cols", buckets[b].cols);
    a.buffer(p + "_eid", buckets[b].eid).buffer(p + "_tasks", buckets[b].tasks).scalar(p + "_n", buckets[b].rows);
  }
  a.buffer("task_pairs", task_pairs).scalar("num_tasks", num_tasks);
}

InspectedEll3d inspect_ell3d(const RelationalGraph& g, int B, int64_t grain) {
  STRATA_CHECK(B >= 0 && B <= 10, "ell3d: the widest bucket must be 2^B with B in [0, 10], got {}", B);
  InspectedEll3d out;
  out.max_bucket = B;
  const int64_t W = int64_t{1} << B;
  const int64_t* rel_ptr = g.rel_ptr.data<int64_t>();
  const int64_t* row_ptr = g.row_ptr.data<int64_t>();
  auto bucket_of = [&](int64_t d) {
    int b = 0;
    while (b < B && (int64_t{1} << b) < d) ++b;
    return b;
  };
  // Tasks own runs of pairs, balanced by non-zeros.
  const int64_t T = std::max<int64_t>(1, std::min<int64_t>(std::max<int64_t>(g.pairs, 1), (g.nnz + grain - 1) / grain));
  out.num_tasks = T;
  std::vector<int64_t> tp(static_cast<size_t>(T) + 1);
  tp[0] = 0;
  tp[T] = g.pairs;
  for (int64_t t = 1; t < T; ++t)
    tp[t] = std::max(tp[t - 1], static_cast<int64_t>(std::lower_bound(row_ptr, row_ptr + g.pairs + 1, g.nnz * t / T) - row_ptr));
  out.task_pairs = Tensor::from_vector(tp);
  out.buckets.resize(static_cast<size_t>(B) + 1);
  for (int b = 0; b <= B; ++b) {
    const int64_t w = int64_t{1} << b;
    std::vector<int64_t> rptr{0}, pairs, cols, eid, tasks;
    for (int64_t r = 0; r < g.relations; ++r) {
      const int64_t first_row = static_cast<int64_t>(pairs.size());
      for (int64_t q = rel_ptr[r]; q < rel_ptr[r + 1]; ++q) {
        const int64_t s = row_ptr[q], e = row_ptr[q + 1], d = e - s;
        if (d == 0 || bucket_of(std::min(d, W)) != b) continue;
        for (int64_t piece = 0; piece * w < d; ++piece) {
          pairs.push_back(q);
          for (int64_t k = 0; k < w; ++k) {
            const int64_t pos = s + piece * w + k;
            cols.push_back(static_cast<int64_t>(g.col_ids.item_as_double(pos < e ? pos : s + piece * w)));
            eid.push_back(pos < e ? pos : -1);
          }
        }
      }
      rptr.push_back(static_cast<int64_t>(pairs.size()));
      // This relation's ELL rows of task t: the first whose pair is in the task.
      for (int64_t t = 0; t <= T; ++t)
        tasks.push_back(std::lower_bound(pairs.begin() + first_row, pairs.end(), tp[t]) - pairs.begin());
    }
    Ell3dBucket& bk = out.buckets[b];
    bk.width = w;
    bk.rows = static_cast<int64_t>(pairs.size());
    bk.slots = bk.rows * w;
    bk.rptr = Tensor::from_vector(rptr);
    bk.pairs = Tensor::from_vector(pairs).cast(g.index_dtype);
    bk.cols = Tensor::from_vector(cols).cast(g.index_dtype);
    bk.eid = Tensor::from_vector(eid).cast(g.index_dtype);
    bk.tasks = Tensor::from_vector(tasks);
  }
  return out;
}

}  // namespace strata::sc
