#include "sparse_compiler/ops/shared_pairs_spmm.h"

#include <omp.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "core/error.h"
#include "core/hash.h"
#include "core/parallel.h"
#include "sparse_compiler/ops/spmm.h"

namespace strata::sc {
namespace {

// The rewrites of A's row shares, one per part. Found once per graph content and options
// while any kernel holds them: the tuner binds several plans that differ only in their
// knobs, and on ogbl-ddi one search takes seconds. Keyed by the bytes of A's arrays, never
// by its address, so another graph can never be handed this one's rewrite.
std::shared_ptr<const std::vector<SharedPairs>> find_parts(const Graph& A, const SharedPairsOptions& o, int parts) {
  Hasher h;
  h.add("shared pairs v1").add_u64(A.num_rows()).add_u64(A.num_cols()).add_u64(A.nnz());
  h.add_u64(static_cast<uint64_t>(A.index_dtype())).add_u64(o.rounds).add_u64(o.min_rows).add_u64(o.scan);
  h.add_u64(o.max_keys).add_u64(parts);
  h.add(A.indptr_data(), static_cast<size_t>(A.num_rows() + 1) * sizeof(int64_t));
  h.add(A.indices().raw_data(), static_cast<size_t>(A.nnz()) * dtype_size(A.index_dtype()));
  const std::string key = h.digest().hex();
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<const std::vector<SharedPairs>>> found;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto hit = found[key].lock()) return hit;
  auto out = std::make_shared<std::vector<SharedPairs>>();
  const int64_t* ip = A.indptr_data();
  int64_t lo = 0;
  for (int t = 0; t < parts; ++t) {
    // Equal shares of the non-zeros.
    const int64_t share = A.nnz() * (t + 1) / parts;
    const int64_t hi =
        t + 1 == parts ? A.num_rows() : std::max<int64_t>(lo, std::lower_bound(ip, ip + A.num_rows() + 1, share) - ip);
    out->push_back(find_shared_pairs(A, lo, hi, o));
    lo = hi;
  }
  for (auto it = found.begin(); it != found.end();) it = it->second.expired() ? found.erase(it) : std::next(it);
  found[key] = out;
  return out;
}

// A launch's arrays from rows of rewrite ids (below `cols` columns, else sum id - cols, a
// row of the part's sums): each row's columns first, its sums after them, as the inspector
// orders them, with split[r] the position of its first sum; sums moved to their rows of S.
SharedPairsSpmm::Launch launch_arrays(const std::vector<int64_t>& indptr, const std::vector<int64_t>& ids, int64_t cols,
                                      int64_t sum_offset, DType index_dtype) {
  SharedPairsSpmm::Launch l;
  l.rows = static_cast<int64_t>(indptr.size()) - 1;
  std::vector<int64_t> moved(ids.size()), split(l.rows);
  for (int64_t r = 0; r < l.rows; ++r) {
    split[r] = indptr[r + 1];
    for (int64_t k = indptr[r]; k < indptr[r + 1]; ++k) {
      const bool sum = ids[k] >= cols;
      if (sum && split[r] == indptr[r + 1]) split[r] = k;
      STRATA_ASSERT(sum || split[r] == indptr[r + 1], "shared pairs: a column after a sum in row {}", r);
      moved[k] = sum ? ids[k] - cols + sum_offset : ids[k];
    }
  }
  l.indptr = Tensor::from_vector(indptr);
  l.split = Tensor::from_vector(split);
  if (index_dtype == DType::I64) {
    l.indices = Tensor::from_vector(moved);
  } else {
    std::vector<int32_t> narrow(moved.begin(), moved.end());
    l.indices = Tensor::from_vector(narrow);
  }
  return l;
}

}  // namespace

SharedPairsSpmm::SharedPairsSpmm(const Graph& A, const SpmmSpec& spec, const KernelPlan& plan, const Tensor& row_scale,
                                 const Tensor& col_scale, const CompiledKernel& rows_kernel)
    : cols_(A.num_cols()), feat_(spec.feat), rows_kernel_(rows_kernel) {
  STRATA_ASSERT(plan.pair_rounds > 0, "shared pairs without rounds");
  SharedPairsOptions o;
  o.rounds = plan.pair_rounds;
  o.min_rows = plan.pair_min_rows;
  // One part per thread.
  rewrites_ = find_parts(A, o, std::max(1, num_threads()));
  for (const SharedPairs& s : *rewrites_) {
    parts_.emplace_back();
    parts_.back().pairs = &s;
    parts_.back().sum_offset = sums_;
    sums_ += s.sums();
  }
  STRATA_CHECK(A.index_dtype() == DType::I64 || sums_ <= std::numeric_limits<int32_t>::max(),
               "spmm shared pairs: {} sums exceed the int32 indices of the graph; load it with int64 indices", sums_);
  // The sums are read right after they are written: no streaming stores for them. Their
  // kernel (no row scale) is the rows' kernel unless the scale or the stores differ; either
  // is compiled once for every part and round.
  KernelPlan sums_plan = plan;
  sums_plan.knobs.stream_stores = false;
  SpmmSpec sums_spec = spec;
  sums_spec.row_scale = false;
  sums_kernel_ = sums_spec.row_scale == spec.row_scale && !plan.knobs.stream_stores
                     ? rows_kernel
                     : std::move(compile_cpu({SpmmKernel::lower(sums_spec, sums_plan)}).front());
  S_ = Tensor::empty({std::max<int64_t>(sums_, 1), spec.feat}, DType::F32);
  auto fixed = [&](const Launch& l, int64_t nnz) {
    KernelArgs a;
    a.buffer("A_indptr", l.indptr).buffer("A_indices", l.indices).buffer("A_split", l.split).buffer("S", S_);
    a.scalar("m", l.rows).scalar("n", cols_).scalar("nnz", nnz);
    if (spec.col_scale) a.buffer("col_scale", col_scale);
    return a;
  };
  for (Part& p : parts_) {
    const SharedPairs& s = *p.pairs;
    for (int64_t r = 0; r < s.rounds(); ++r) {
      const int64_t b = s.round_begin[r], e = s.round_begin[r + 1];
      std::vector<int64_t> indptr(e - b + 1), ids;
      for (int64_t k = b; k < e; ++k) {
        indptr[k - b] = 2 * (k - b);
        ids.push_back(std::min(s.pair_a[k], s.pair_b[k]));
        ids.push_back(std::max(s.pair_a[k], s.pair_b[k]));
      }
      indptr[e - b] = 2 * (e - b);
      Launch l = launch_arrays(indptr, ids, cols_, p.sum_offset, A.index_dtype());
      KernelArgs a = fixed(l, 2 * (e - b));
      a.buffer("Y", S_.slice_rows(p.sum_offset + b, p.sum_offset + e));
      l.args = sums_kernel_.pack(a, {"X"});
      p.rounds.push_back(std::move(l));
    }
    p.rows = launch_arrays(s.indptr, s.indices, cols_, p.sum_offset, A.index_dtype());
    KernelArgs a = fixed(p.rows, static_cast<int64_t>(s.indices.size()));
    if (spec.row_scale) a.buffer("row_scale", row_scale.slice_rows(s.row_begin, s.row_end));
    p.rows.args = rows_kernel_.pack(a, {"X", "Y"});
  }
}

SharedPairsSpmm::~SharedPairsSpmm() = default;

void SharedPairsSpmm::run_into(const Tensor& X, Tensor& Y) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const int P = static_cast<int>(parts_.size());
#pragma omp parallel num_threads(P)
  {
    const int t = omp_get_thread_num(), T = omp_get_num_threads();
    // Fewer threads than parts (a limit set since the kernel was built): each takes its share.
    for (int q = t; q < P; q += T) {
      const Part& p = parts_[q];
      for (const Launch& round : p.rounds) round.args.run({&X});
      const Tensor y = Y.slice_rows(p.pairs->row_begin, p.pairs->row_end);
      p.rows.args.run({&X, &y});
    }
  }
}

}  // namespace strata::sc
