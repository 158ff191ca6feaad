#include "sparse_compiler/ops/shared_pairs_spmm.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <string>

#include "core/error.h"
#include "core/hash.h"
#include "core/parallel.h"
#include "sparse_compiler/ops/spmm.h"

namespace strata::sc {
namespace {

// A CSR graph over E's rows, in A's index type (the kernels are compiled for it): ids below
// `cols` as they are, a part's sum ids moved to its rows of S.
Graph extended_graph(int64_t rows, int64_t ids, int64_t cols, int64_t sum_offset, const std::vector<int64_t>& indptr,
                     const std::vector<int64_t>& indices, DType index_dtype) {
  std::vector<int64_t> moved(indices.size());
  for (size_t k = 0; k < indices.size(); ++k) moved[k] = indices[k] < cols ? indices[k] : indices[k] + sum_offset;
  Tensor ip = Tensor::from_vector(indptr);
  if (index_dtype == DType::I64) return Graph::from_csr(rows, ids, ip, Tensor::from_vector(moved));
  std::vector<int32_t> narrow(moved.begin(), moved.end());
  return Graph::from_csr(rows, ids, ip, Tensor::from_vector(narrow));
}

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

}  // namespace

SharedPairsSpmm::SharedPairsSpmm(const Graph& A, const SpmmSpec& spec, const KernelPlan& plan, const Tensor& row_scale,
                                 const CompiledKernel& rows_kernel)
    : cols_(A.num_cols()), feat_(spec.feat) {
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
  const int64_t ids = cols_ + sums_;
  STRATA_CHECK(A.index_dtype() == DType::I64 || ids <= std::numeric_limits<int32_t>::max(),
               "spmm shared pairs: {} columns and {} sums exceed the int32 indices of the graph; load it with int64 "
               "indices",
               cols_, sums_);
  KernelPlan csr = plan;
  csr.pair_rounds = 0;
  // The sums are read right after they are written: no streaming stores for them. Their
  // kernel (no row scale) is the rows' kernel unless the scale or the stores differ; either
  // is compiled once for every part and round.
  SpmmOptions sums;
  sums.feat = spec.feat;
  sums.plan = csr;
  sums.plan->knobs.stream_stores = false;
  SpmmSpec sums_spec = spec;
  sums_spec.row_scale = false;
  const CompiledKernel sums_kernel = sums_spec.row_scale == spec.row_scale && !csr.knobs.stream_stores
                                         ? rows_kernel
                                         : std::move(compile_cpu({SpmmKernel::lower(sums_spec, *sums.plan)}).front());
  for (Part& p : parts_) {
    const SharedPairs& s = *p.pairs;
    for (int64_t r = 0; r < s.rounds(); ++r) {
      const int64_t b = s.round_begin[r], e = s.round_begin[r + 1];
      std::vector<int64_t> indptr(e - b + 1), indices;
      for (int64_t k = b; k < e; ++k) {
        indptr[k - b] = 2 * (k - b);
        indices.push_back(std::min(s.pair_a[k], s.pair_b[k]));
        indices.push_back(std::max(s.pair_a[k], s.pair_b[k]));
      }
      indptr[e - b] = 2 * (e - b);
      p.rounds.push_back(std::make_unique<SpmmKernel>(
          extended_graph(e - b, ids, cols_, p.sum_offset, indptr, indices, A.index_dtype()), sums, sums_kernel));
    }
    SpmmOptions rows;
    rows.feat = spec.feat;
    rows.plan = csr;
    if (row_scale.defined()) rows.row_scale = row_scale.slice_rows(s.row_begin, s.row_end);
    p.rows = std::make_unique<SpmmKernel>(
        extended_graph(s.row_end - s.row_begin, ids, cols_, p.sum_offset, s.indptr, s.indices, A.index_dtype()), rows,
        rows_kernel);
  }
  extended_ = Tensor::empty({ids, spec.feat}, DType::F32);
}

SharedPairsSpmm::~SharedPairsSpmm() = default;

void SharedPairsSpmm::run_into(const Tensor& X, Tensor& Y) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t bytes = cols_ * feat_ * static_cast<int64_t>(sizeof(float));
  const char* from = static_cast<const char*>(X.raw_data());
  char* to = static_cast<char*>(extended_.raw_data());
  const int P = static_cast<int>(parts_.size());
#pragma omp parallel num_threads(P)
  {
    const int t = omp_get_thread_num(), T = omp_get_num_threads();
    // E's head is X: the kernels read the columns and the sums through one operand.
    const int64_t b = bytes * t / T, e = bytes * (t + 1) / T;
    std::memcpy(to + b, from + b, static_cast<size_t>(e - b));
#pragma omp barrier
    // Fewer threads than parts (a limit set since the kernel was built): each takes its share.
    for (int q = t; q < P; q += T) {
      const Part& p = parts_[q];
      for (int64_t r = 0; r < p.pairs->rounds(); ++r) {
        const int64_t first = cols_ + p.sum_offset + p.pairs->round_begin[r];
        Tensor out = extended_.slice_rows(first, first + p.pairs->round_begin[r + 1] - p.pairs->round_begin[r]);
        p.rounds[r]->run_into(extended_, out);
      }
      Tensor y = Y.slice_rows(p.pairs->row_begin, p.pairs->row_end);
      p.rows->run_into(extended_, y);
    }
  }
}

}  // namespace strata::sc
