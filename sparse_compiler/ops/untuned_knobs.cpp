#include "sparse_compiler/ops/untuned_knobs.h"

#include <algorithm>
#include <cmath>

#include <unistd.h>

#include "core/dtype.h"
#include "core/error.h"

namespace strata::sc {

int64_t default_prefetch_distance(int64_t feat) {
  return std::clamp<int64_t>(16384 / (4 * std::max<int64_t>(feat, 1)), 4, 256);
}

int64_t untuned_feature_tile(int64_t feat) {
  if (feat <= 256) return 0;
  if (feat % 128 == 0) return 128;
  for (int64_t d = 256; d >= 64; d -= 8)
    if (feat % d == 0) return d;
  return 0;
}

CpuKnobs untuned_spmm_knobs(CpuKnobs base, int64_t feat, int64_t feature_tile, int64_t out_rows, int64_t x_rows) {
  const int64_t row_bytes = feat * static_cast<int64_t>(sizeof(float));
  const bool whole_vectors = feat % base.vector_lanes == 0 && feature_tile % base.vector_lanes == 0;
  // Streaming stores write staged rows; wider rows are summed in Y itself.
  const bool staged = (feature_tile > 0 ? feature_tile : feat) <= Schedule::kMaxStagedElements;
  if (whole_vectors && staged && out_rows * row_bytes >= kUntunedCacheBytes) base.stream_stores = true;
  if (x_rows * row_bytes >= 2 * kUntunedCacheBytes) base.prefetch = default_prefetch_distance(feat);
  return base;
}

int untuned_accumulator_sets(int64_t feat, int lanes, int64_t rows, int64_t nnz) {
  return feat >= 1 && feat <= lanes && nnz >= 32 * std::max<int64_t>(rows, 1) ? 2 : 1;
}

std::vector<int64_t> column_tile_widths(int64_t feat, bool exhaustive) {
  std::vector<int64_t> out;
  for (int64_t bytes : exhaustive ? std::vector<int64_t>{32 << 10, 64 << 10, 128 << 10} : std::vector<int64_t>{32 << 10, 64 << 10}) {
    int64_t w = 8;
    while (w * 2 * std::max<int64_t>(feat, 1) * 4 <= bytes) w *= 2;
    if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
  }
  return out;
}

double expected_tile_segments(double degree, double tiles) {
  if (degree <= 0) return 0;
  return std::max(1.0, tiles * (1 - std::pow(1 - 1 / tiles, degree)));
}

double mean_tile_segment(const GraphFingerprint& g, int64_t tile_cols) {
  const double T = std::max(1.0, std::ceil(static_cast<double>(g.cols) / static_cast<double>(std::max<int64_t>(1, tile_cols))));
  double segments = 0, nz = 0;
  for (size_t k = 1; k < g.row_histogram.size(); ++k) {
    const double d = GraphFingerprint::bucket_degree(k), rows = static_cast<double>(g.row_histogram[k]);
    segments += rows * expected_tile_segments(d, T);
    nz += rows * d;
  }
  return segments > 0 ? nz / segments : 0;
}

bool column_tiles_may_pay(const GraphFingerprint& g, int64_t feat, int64_t tile_cols) {
  return feat >= 1 && g.cols >= 4 * tile_cols && mean_tile_segment(g, tile_cols) >= 4;
}

int64_t column_tile_grain(int64_t nnz, int threads) {
  constexpr int64_t kCoarse = 65536;
  return nnz / kCoarse >= 4 * std::max(1, threads) ? kCoarse : 16384;
}

CpuKnobs untuned_sddmm_knobs(CpuKnobs base, int64_t feat, int64_t y_rows) {
  if (y_rows * feat * static_cast<int64_t>(sizeof(float)) >= 4 * kUntunedCacheBytes)
    base.prefetch = default_prefetch_distance(feat);
  return base;
}

bool untuned_edge_groups(int64_t feat, int lanes, int64_t rows, int64_t nnz) {
  return lanes >= 4 && feat % lanes == 0 && feat <= 4 * lanes && nnz >= 32 * std::max<int64_t>(rows, 1);
}

bool slot_groups_y_in_cache(int64_t y_bytes) { return y_bytes < 4 * host_l2_bytes(); }

bool untuned_slot_groups(int64_t feat, int lanes, int64_t rows, int64_t nnz, int64_t y_bytes) {
  if (lanes < 4) return false;
  return (feat == lanes && slot_groups_y_in_cache(y_bytes)) ||
         (feat == 2 * lanes && nnz < 32 * std::max<int64_t>(rows, 1) && y_bytes <= host_l2_bytes());
}

int64_t slot_group_grain(int64_t nnz, int threads) {
  for (int64_t grain : {16384, 4096, 1024})
    if (nnz / grain >= 8 * std::max(1, threads)) return grain;
  return 256;
}

CpuKnobs untuned_gather_knobs(CpuKnobs base, int64_t gathered_bytes) {
  base.prefetch = 2 * gathered_bytes >= host_l2_bytes() ? 16 : 0;
  return base;
}

int64_t host_l2_bytes() {
  const long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? static_cast<int64_t>(l2) : int64_t{1} << 20;
}

int64_t count_tile_segments(const Graph& A, int64_t tile_cols) {
  STRATA_CHECK(tile_cols >= 1, "count_tile_segments: tile_cols must be positive, got {}", tile_cols);
  return dispatch_index(A.index_dtype(), [&](auto zero) {
    using I = decltype(zero);
    const int64_t* ip = A.indptr_data();
    const I* col = A.indices().data<I>();
    int64_t segments = 0;
#pragma omp parallel for schedule(static) reduction(+ : segments)
    for (int64_t r = 0; r < A.num_rows(); ++r)
      for (int64_t p = ip[r]; p < ip[r + 1]; ++p)
        segments += p == ip[r] || static_cast<int64_t>(col[p]) / tile_cols != static_cast<int64_t>(col[p - 1]) / tile_cols;
    return segments;
  });
}

std::optional<FormatSpec> untuned_column_tiles(const Graph& A, int64_t feat, int threads, int64_t l2_bytes) {
  if (feat < 1 || !A.columns_sorted() || A.nnz() < 4 * std::max(1, threads) * int64_t{16384}) return std::nullopt;
  const int64_t w = column_tile_widths(feat, false).back();
  if (A.num_cols() < 4 * w) return std::nullopt;
  const int64_t segments = count_tile_segments(A, w);
  const double x_bytes = static_cast<double>(A.num_cols()) * static_cast<double>(feat) * 4;
  const double needed = x_bytes >= 2.0 * static_cast<double>(l2_bytes) ? 8 : 16;
  if (segments == 0 || static_cast<double>(A.nnz()) < needed * static_cast<double>(segments)) return std::nullopt;
  FormatSpec f;
  f.kind = FormatKind::Dcsr;
  f.col_tile = w;
  return f;
}

}  // namespace strata::sc
