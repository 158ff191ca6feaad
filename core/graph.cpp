#include "core/graph.h"

#include <omp.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "core/host_memory.h"

namespace strata {
namespace {

// Work below about a millisecond runs on the calling thread (see kParallelWork in
// core/autograd.h for why small ops stay serial on shared machines): a transpose
// scatters each entry to a random column (~6 ns an entry), a CSR check reads it once
// (under 1 ns).
constexpr int64_t kParallelTransposeNnz = int64_t{1} << 17;
constexpr int64_t kParallelCheckEntries = int64_t{1} << 20;

// Reads an int32 or int64 tensor element as int64.
struct IndexReader {
  const void* p;
  bool wide;
  explicit IndexReader(const Tensor& t) : p(t.raw_data()), wide(t.dtype() == DType::I64) {}
  int64_t operator[](int64_t i) const {
    return wide ? static_cast<const int64_t*>(p)[i] : static_cast<const int32_t*>(p)[i];
  }
};

void check_index_tensor(const Tensor& t, const std::string& what) {
  STRATA_CHECK(t.defined() && t.ndim() == 1 && (t.dtype() == DType::I32 || t.dtype() == DType::I64),
               "{}: expected a 1-d int32 or int64 tensor, got {}", what, t.describe());
  STRATA_CHECK(t.device().is_cpu(), "{}: graphs are built on the host, got {}", what, t.describe());
}

DType pick_index_dtype(int64_t num_cols, bool force_int64) {
  return (force_int64 || num_cols > std::numeric_limits<int32_t>::max()) ? DType::I64 : DType::I32;
}

}  // namespace

Graph Graph::from_coo(int64_t num_rows, int64_t num_cols, const Tensor& rows, const Tensor& cols,
                      const CooOptions& opt, const Tensor& values) {
  STRATA_CHECK(num_rows >= 0 && num_cols >= 0, "{}: negative graph size {} x {}", opt.source, num_rows,
               num_cols);
  check_index_tensor(rows, opt.source + " row ids");
  check_index_tensor(cols, opt.source + " column ids");
  const int64_t n = rows.numel();
  STRATA_CHECK(cols.numel() == n, "{}: {} row ids but {} column ids", opt.source, n, cols.numel());
  const bool weighted = values.defined();
  if (weighted) {
    STRATA_CHECK(values.dtype() == DType::F32 && values.numel() == n,
                 "{}: edge values must be float32 with one value per edge ({}), got {}", opt.source, n,
                 values.describe());
  }
  const IndexReader R(rows), C(cols);
  const float* V = weighted ? values.data<float>() : nullptr;

  // The row counts, the skip flags, then the CSR itself (offsets, indices, values):
  // refused up front when a size line or node count asks for more than the machine has.
  check_host_bytes(
      16.0 * (static_cast<double>(num_rows) + 1) + static_cast<double>(n) * (1.0 + 8.0 + (weighted ? 4.0 : 0.0)),
      fmt::format("{}: a graph of {} rows and {} entries", opt.source, num_rows, n));
  // Validate and count entries per row.
  std::vector<int64_t> count(static_cast<size_t>(num_rows) + 1, 0);
  std::vector<uint8_t> skip(static_cast<size_t>(n), 0);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t r = R[k], c = C[k];
    STRATA_CHECK(r >= 0 && r < num_rows, "{}: entry {} has row id {} outside [0, {})", opt.source, k, r,
                 num_rows);
    STRATA_CHECK(c >= 0 && c < num_cols, "{}: entry {} has column id {} outside [0, {})", opt.source, k, c,
                 num_cols);
    if (r == c) {
      if (opt.self_loops == SelfLoopPolicy::Error)
        STRATA_FAIL("{}: entry {} is a self-loop ({}, {}) and self-loops are not allowed here", opt.source, k, r,
                    c);
      if (opt.self_loops == SelfLoopPolicy::Remove) {
        skip[k] = 1;
        continue;
      }
    }
    ++count[r + 1];
  }
  std::partial_sum(count.begin(), count.end(), count.begin());

  // Stable counting sort of the entry ids by row.
  std::vector<int64_t> order(static_cast<size_t>(count[num_rows]));
  {
    std::vector<int64_t> next(count.begin(), count.end() - 1);
    for (int64_t k = 0; k < n; ++k)
      if (!skip[k]) order[next[R[k]]++] = k;
  }

  // Per row: order columns, then resolve duplicates. keep[p] says whether order[p]
  // survives; merged values accumulate on the survivor.
  std::vector<uint8_t> keep(order.size(), 1);
  std::vector<float> merged(weighted || opt.duplicates == DuplicatePolicy::Sum ? order.size() : 0);
  const bool sorted = opt.order == ColumnOrder::Sorted;
  std::string dup_error;
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t r = 0; r < num_rows; ++r) {
    auto b = order.begin() + count[r], e = order.begin() + count[r + 1];
    if (sorted && e - b >= 2) std::stable_sort(b, e, [&](int64_t x, int64_t y) { return C[x] < C[y]; });
    // Each position's value once its entry is in place (after the sort, not before).
    if (!merged.empty())
      for (int64_t p = count[r]; p < count[r + 1]; ++p) merged[static_cast<size_t>(p)] = weighted ? V[order[p]] : 1.0f;
    if (e - b < 2 || opt.duplicates == DuplicatePolicy::Keep) continue;
    // Positions of this row sorted by (column, input id) to find repeats.
    std::vector<int64_t> pos(static_cast<size_t>(e - b));
    std::iota(pos.begin(), pos.end(), count[r]);
    if (!sorted)
      std::sort(pos.begin(), pos.end(), [&](int64_t x, int64_t y) {
        return C[order[x]] != C[order[y]] ? C[order[x]] < C[order[y]] : order[x] < order[y];
      });
    for (size_t i = 1; i < pos.size(); ++i) {
      int64_t first = pos[i - 1];
      if (C[order[pos[i]]] != C[order[first]]) continue;
      // Walk back to the first copy of this column (already marked kept).
      size_t j = i - 1;
      while (!keep[pos[j]]) --j;
      first = pos[j];
      if (opt.duplicates == DuplicatePolicy::Error) {
#pragma omp critical
        if (dup_error.empty())
          dup_error = fmt::format("{}: entry {} repeats entry {} (row {}, column {}) and duplicates are not allowed",
                                  opt.source, order[pos[i]], order[first], r, C[order[first]]);
        break;
      }
      keep[pos[i]] = 0;
      if (opt.duplicates == DuplicatePolicy::Sum) merged[first] += merged[pos[i]];
    }
  }
  STRATA_CHECK(dup_error.empty(), "{}", dup_error);

  // Compact into CSR arrays.
  Graph g;
  g.num_rows_ = num_rows;
  g.num_cols_ = num_cols;
  g.sorted_ = sorted;
  g.indptr_ = Tensor::empty({num_rows + 1}, DType::I64);
  int64_t* ip = g.indptr_.data<int64_t>();
  ip[0] = 0;
  for (int64_t r = 0; r < num_rows; ++r) {
    int64_t kept = 0;
    for (int64_t p = count[r]; p < count[r + 1]; ++p) kept += keep[p];
    ip[r + 1] = ip[r] + kept;
  }
  const int64_t nnz = ip[num_rows];
  const DType idt = pick_index_dtype(num_cols, opt.force_int64);
  g.indices_ = Tensor::empty({nnz}, idt);
  g.edge_ids_ = Tensor::empty({nnz}, DType::I64);
  const bool has_vals = weighted || opt.duplicates == DuplicatePolicy::Sum;
  if (has_vals) g.values_ = Tensor::empty({nnz}, DType::F32);
  int64_t* eid = g.edge_ids_.data<int64_t>();
  float* val = has_vals ? g.values_.data<float>() : nullptr;
  dispatch_index(idt, [&](auto zero) {
    using I = decltype(zero);
    I* ind = g.indices_.data<I>();
#pragma omp parallel for schedule(dynamic, 1024)
    for (int64_t r = 0; r < num_rows; ++r) {
      int64_t q = ip[r];
      for (int64_t p = count[r]; p < count[r + 1]; ++p) {
        if (!keep[p]) continue;
        ind[q] = static_cast<I>(C[order[p]]);
        eid[q] = order[p];
        if (val) val[q] = merged[p];
        ++q;
      }
    }
  });
  return g;
}

Graph Graph::from_csr(int64_t num_rows, int64_t num_cols, Tensor indptr, Tensor indices, Tensor values,
                      Tensor edge_ids) {
  check_tensor(indptr, "CSR indptr", DType::I64, 1);
  check_index_tensor(indices, "CSR indices");
  STRATA_CHECK(indptr.numel() == num_rows + 1, "CSR indptr: expected {} entries (rows + 1), got {}",
               num_rows + 1, indptr.numel());
  const int64_t* ip = indptr.data<int64_t>();
  STRATA_CHECK(ip[0] == 0, "CSR indptr: must start at 0, starts at {}", ip[0]);
  // The checks run in parallel on large inputs (batches of a mini-batch epoch build
  // one CSR each); on a failure a serial pass finds the first bad entry to name it.
  const int64_t m = indices.numel();
  bool ordered = true;
#pragma omp parallel for reduction(&& : ordered) schedule(static) if (num_rows >= kParallelCheckEntries)
  for (int64_t r = 0; r < num_rows; ++r) ordered = ordered && ip[r + 1] >= ip[r];
  if (!ordered) {
    for (int64_t r = 0; r < num_rows; ++r)
      STRATA_CHECK(ip[r + 1] >= ip[r], "CSR indptr: decreases at row {} ({} then {})", r, ip[r], ip[r + 1]);
  }
  STRATA_CHECK(ip[num_rows] == m, "CSR indptr: ends at {} but there are {} indices", ip[num_rows], m);
  bool in_range = true, sorted = true;
  dispatch_index(indices.dtype(), [&](auto zero) {
    using I = decltype(zero);
    const I* col = indices.data<I>();
#pragma omp parallel for reduction(&& : in_range, sorted) schedule(static) if (m >= kParallelCheckEntries)
    for (int64_t r = 0; r < num_rows; ++r) {
      const I* c = col + ip[r];
      const int64_t d = ip[r + 1] - ip[r];
      bool ok = true, up = true;
      for (int64_t k = 0; k < d; ++k) ok &= (c[k] >= 0) & (c[k] < num_cols);
      for (int64_t k = 1; k < d; ++k) up &= c[k] >= c[k - 1];
      in_range = in_range && ok;
      sorted = sorted && up;
    }
  });
  if (!in_range) {
    const IndexReader C(indices);
    for (int64_t r = 0; r < num_rows; ++r)
      for (int64_t p = ip[r]; p < ip[r + 1]; ++p)
        STRATA_CHECK(C[p] >= 0 && C[p] < num_cols, "CSR indices: entry {} (row {}) is {}, outside [0, {})", p, r, C[p],
                     num_cols);
  }
  if (values.defined()) check_shape(values, "CSR values", {indices.numel()});
  if (edge_ids.defined()) check_shape(edge_ids, "CSR edge ids", {indices.numel()});
  Graph g;
  g.num_rows_ = num_rows;
  g.num_cols_ = num_cols;
  g.indptr_ = std::move(indptr);
  g.indices_ = std::move(indices);
  g.values_ = std::move(values);
  g.edge_ids_ = std::move(edge_ids);
  g.sorted_ = sorted;
  return g;
}

Tensor Graph::edge_ids() const {
  if (edge_ids_.defined()) return edge_ids_;
  return Tensor::arange(nnz());
}

int64_t Graph::column(int64_t p) const { return IndexReader(indices_)[p]; }

namespace {

// Counting-sort transpose of a CSR split into `parts` runs of rows, each holding about
// nnz/parts entries: every part counts its columns, and after a prefix over (column,
// part) scatters its entries to its own slots of each column. Slots of a column are
// ordered by part, then by row within a part, so the output is the serial one, bit for
// bit, whatever the part and thread counts. Memory is allocated before the parallel
// region, so running out of it throws std::bad_alloc to the caller (an exception may
// not leave an OpenMP region); parts are shared out over whatever threads OpenMP gives.
template <typename Src, typename Dst>
void transpose_csr(int64_t num_rows, int64_t num_cols, const int64_t* ip, const Src* col, const int64_t* eid,
                   const float* val, int parts, int64_t* tp, Dst* ti, int64_t* teid, float* tval) {
  const int64_t m = ip[num_rows];
  // Part t owns rows [first_row[t], first_row[t + 1]): from the first row at or past its share.
  std::vector<int64_t> first_row(static_cast<size_t>(parts) + 1, num_rows);
  first_row[0] = 0;
  for (int t = 1; t < parts; ++t)
    first_row[static_cast<size_t>(t)] = std::lower_bound(ip, ip + num_rows, m * t / parts) - ip;
  // next[t * num_cols + c]: part t's count of column c, then its next slot in c.
  std::vector<int64_t> next(static_cast<size_t>(parts) * static_cast<size_t>(num_cols), 0);
  const auto counts = [&](int t) { return next.data() + static_cast<size_t>(t) * static_cast<size_t>(num_cols); };
#pragma omp parallel num_threads(parts) if (parts > 1)
  {
    const int me = omp_get_thread_num(), team = omp_get_num_threads();
    for (int t = me; t < parts; t += team) {
      int64_t* mine = counts(t);
      for (int64_t p = ip[first_row[static_cast<size_t>(t)]]; p < ip[first_row[static_cast<size_t>(t) + 1]]; ++p)
        ++mine[col[p]];
    }
#pragma omp barrier
#pragma omp for schedule(static)
    for (int64_t c = 0; c < num_cols; ++c) {
      int64_t total = 0;
      for (int t = 0; t < parts; ++t) total += counts(t)[c];
      tp[c + 1] = total;
    }
#pragma omp single
    {
      tp[0] = 0;
      std::partial_sum(tp, tp + num_cols + 1, tp);
    }
#pragma omp for schedule(static)
    for (int64_t c = 0; c < num_cols; ++c) {
      int64_t at = tp[c];
      for (int t = 0; t < parts; ++t) {
        const int64_t count = counts(t)[c];
        counts(t)[c] = at;
        at += count;
      }
    }
    for (int t = me; t < parts; t += team) {
      int64_t* mine = counts(t);
      for (int64_t r = first_row[static_cast<size_t>(t)]; r < first_row[static_cast<size_t>(t) + 1]; ++r) {
        for (int64_t p = ip[r]; p < ip[r + 1]; ++p) {
          const int64_t q = mine[col[p]]++;
          ti[q] = static_cast<Dst>(r);
          teid[q] = eid ? eid[p] : p;
          if (tval) tval[q] = val[p];
        }
      }
    }
  }
}

}  // namespace

Graph Graph::transpose() const {
  STRATA_ASSERT(!empty(), "transpose of an empty graph");
  Graph t;
  t.num_rows_ = num_cols_;
  t.num_cols_ = num_rows_;
  t.sorted_ = true;  // rows are visited in order, so each new row's columns ascend
  const int64_t m = nnz();
  // One part per thread; each keeps a count per column, so more than one only where
  // all the counts together are no more than one per entry (and one inside a parallel region).
  const int max_threads = omp_in_parallel() ? 1 : std::max(1, omp_get_max_threads());
  const int parts = m >= kParallelTransposeNnz && num_cols_ <= m / max_threads ? max_threads : 1;
  t.indptr_ = Tensor::empty({num_cols_ + 1}, DType::I64);
  const DType idt = pick_index_dtype(num_rows_, index_dtype() == DType::I64);
  t.indices_ = Tensor::empty({m}, idt);
  t.edge_ids_ = Tensor::empty({m}, DType::I64);
  if (has_values()) t.values_ = Tensor::empty({m}, DType::F32);
  const int64_t* eid = edge_ids_.defined() ? edge_ids_.data<int64_t>() : nullptr;
  const float* val = has_values() ? values_.data<float>() : nullptr;
  dispatch_index(index_dtype(), [&](auto src_zero) {
    using Src = decltype(src_zero);
    dispatch_index(idt, [&](auto dst_zero) {
      using Dst = decltype(dst_zero);
      transpose_csr(num_rows_, num_cols_, indptr_data(), indices_.data<Src>(), eid, val, parts,
                    t.indptr_.data<int64_t>(), t.indices_.data<Dst>(), t.edge_ids_.data<int64_t>(),
                    has_values() ? t.values_.data<float>() : nullptr);
    });
  });
  return t;
}

namespace {
// Appends A's entries to COO lists, remembering each entry's edge id and value.
void append_entries(const Graph& a, bool transpose, std::vector<int64_t>& rows, std::vector<int64_t>& cols,
                    std::vector<int64_t>& eids, std::vector<float>& vals) {
  const Tensor e = a.edge_ids();
  const int64_t* eid = e.data<int64_t>();
  const float* v = a.has_values() ? a.values().data<float>() : nullptr;
  for (int64_t r = 0; r < a.num_rows(); ++r) {
    for (int64_t p = a.row_begin(r); p < a.row_end(r); ++p) {
      const int64_t c = a.column(p);
      rows.push_back(transpose ? c : r);
      cols.push_back(transpose ? r : c);
      eids.push_back(eid[p]);
      vals.push_back(v ? v[p] : 1.0f);
    }
  }
}

Graph build_with_ids(int64_t n_rows, int64_t n_cols, const std::vector<int64_t>& rows,
                     const std::vector<int64_t>& cols, const std::vector<int64_t>& eids,
                     const std::vector<float>& vals, bool weighted, const CooOptions& opt) {
  Tensor vt = weighted ? Tensor::from_vector(vals) : Tensor();
  Graph g = Graph::from_coo(n_rows, n_cols, Tensor::from_vector(rows), Tensor::from_vector(cols), opt, vt);
  // from_coo numbered edges by input position; map them back to the source ids.
  Tensor ids = g.edge_ids();
  int64_t* p = ids.data<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) p[i] = eids[p[i]];
  return Graph::from_csr(g.num_rows(), g.num_cols(), g.indptr(), g.indices(), g.values(), ids);
}
}  // namespace

Graph Graph::with_self_loops() const {
  STRATA_CHECK(num_rows_ == num_cols_, "adding self-loops needs a square graph, got {}", describe());
  std::vector<int64_t> rows, cols, eids;
  std::vector<float> vals;
  append_entries(*this, false, rows, cols, eids, vals);
  const Tensor e = edge_ids();
  int64_t base = 0;
  for (int64_t i = 0; i < e.numel(); ++i) base = std::max(base, e.data<int64_t>()[i] + 1);
  std::vector<uint8_t> has_loop(static_cast<size_t>(num_rows_), 0);
  for (int64_t r = 0; r < num_rows_; ++r)
    for (int64_t p = row_begin(r); p < row_end(r); ++p)
      if (column(p) == r) has_loop[r] = 1;
  for (int64_t r = 0; r < num_rows_; ++r) {
    if (has_loop[r]) continue;
    rows.push_back(r);
    cols.push_back(r);
    eids.push_back(base + r);
    vals.push_back(1.0f);
  }
  CooOptions opt;
  opt.order = sorted_ ? ColumnOrder::Sorted : ColumnOrder::InputOrder;
  opt.force_int64 = index_dtype() == DType::I64;
  opt.source = "with_self_loops";
  return build_with_ids(num_rows_, num_cols_, rows, cols, eids, vals, has_values(), opt);
}

Graph Graph::symmetrized() const {
  STRATA_CHECK(num_rows_ == num_cols_, "symmetrizing needs a square graph, got {}", describe());
  std::vector<int64_t> rows, cols, eids;
  std::vector<float> vals;
  append_entries(*this, false, rows, cols, eids, vals);
  append_entries(*this, true, rows, cols, eids, vals);
  CooOptions opt;
  opt.duplicates = DuplicatePolicy::KeepFirst;
  opt.force_int64 = index_dtype() == DType::I64;
  opt.source = "symmetrized";
  return build_with_ids(num_rows_, num_cols_, rows, cols, eids, vals, has_values(), opt);
}

Graph Graph::without_values() const {
  Graph g = *this;
  g.values_ = Tensor();
  return g;
}

Graph Graph::with_values(Tensor values) const {
  check_tensor(values, "edge values", DType::F32, 1);
  check_shape(values, "edge values", {nnz()});
  Graph g = *this;
  g.values_ = std::move(values);
  return g;
}

Graph Graph::with_index_dtype(DType dtype) const {
  STRATA_CHECK(dtype == DType::I32 || dtype == DType::I64, "index dtype must be int32 or int64, got {}",
               dtype_name(dtype));
  if (dtype == index_dtype()) return *this;
  STRATA_CHECK(dtype == DType::I64 || num_cols_ <= std::numeric_limits<int32_t>::max(),
               "graph with {} columns does not fit int32 indices", num_cols_);
  Graph g = *this;
  g.indices_ = indices_.cast(dtype);
  return g;
}

bool Graph::same_structure(const Graph& o) const {
  if (num_rows_ != o.num_rows_ || num_cols_ != o.num_cols_ || nnz() != o.nnz()) return false;
  for (int64_t r = 0; r <= num_rows_; ++r)
    if (indptr_data()[r] != o.indptr_data()[r]) return false;
  for (int64_t p = 0; p < nnz(); ++p)
    if (column(p) != o.column(p)) return false;
  return true;
}

std::string DegreeStats::bucket_label(size_t k) {
  if (k == 0) return "0";
  if (k == 1) return "1";
  const int64_t lo = int64_t{1} << (k - 1), hi = (int64_t{1} << k) - 1;
  return fmt::format("{}-{}", lo, hi);
}

DegreeStats Graph::degree_stats() const {
  DegreeStats s;
  s.rows = num_rows_;
  s.nnz = nnz();
  if (num_rows_ == 0) return s;
  std::vector<int64_t> deg(static_cast<size_t>(num_rows_));
  for (int64_t r = 0; r < num_rows_; ++r) {
    deg[r] = degree(r);
    size_t bucket = deg[r] == 0 ? 0 : static_cast<size_t>(64 - __builtin_clzll(static_cast<uint64_t>(deg[r])));
    if (s.histogram.size() <= bucket) s.histogram.resize(bucket + 1, 0);
    ++s.histogram[bucket];
    s.empty_rows += deg[r] == 0;
  }
  std::sort(deg.begin(), deg.end());
  auto pct = [&](double q) {
    size_t i = static_cast<size_t>(q * static_cast<double>(deg.size() - 1) + 0.5);
    return deg[std::min(i, deg.size() - 1)];
  };
  s.min = deg.front();
  s.max = deg.back();
  s.median = pct(0.5);
  s.p90 = pct(0.9);
  s.p99 = pct(0.99);
  s.mean = static_cast<double>(s.nnz) / static_cast<double>(num_rows_);
  return s;
}

std::string Graph::describe() const {
  return fmt::format("{} x {}, {} non-zeros, {} indices{}", num_rows_, num_cols_, nnz(),
                     dtype_name(index_dtype()), has_values() ? ", weighted" : "");
}

}  // namespace strata
