// Greedy rounds of pair finding (shared_pairs.h). Per round: count the pairs of ids among
// each row's first `scan` ids, in parallel (each thread files the keys of its rows into
// buckets by key, then each bucket is sorted and counted by one thread, so counts are exact
// and need no locks); take the pairs held by at least `min_rows` rows, most rows first, each
// id in at most one pair of the round; rewrite every row that holds both ids of a taken pair.
#include "sparse_compiler/formats/shared_pairs.h"

#include <omp.h>

#include <algorithm>

#include "core/error.h"

namespace strata::sc {
namespace {

constexpr int64_t kIdLimit = int64_t{1} << 32;  // two ids packed in one 64-bit key

uint64_t pack(int64_t u, int64_t v) { return static_cast<uint64_t>(u) << 32 | static_cast<uint64_t>(v); }

struct Candidate {
  int64_t rows;
  uint64_t key;
};

// Pairs among each row's first `scan` ids that at least min_rows rows hold, most rows first
// (ties by key, so the order does not depend on the thread count).
std::vector<Candidate> count_pairs(const std::vector<std::vector<int64_t>>& rows, int scan, int64_t min_rows) {
  const int threads = std::max(1, omp_get_max_threads());
  const int buckets = threads;
  const int64_t n = static_cast<int64_t>(rows.size());
  std::vector<std::vector<std::vector<uint64_t>>> filed(threads, std::vector<std::vector<uint64_t>>(buckets));
#pragma omp parallel num_threads(threads)
  {
    auto& mine = filed[omp_get_thread_num()];
#pragma omp for schedule(dynamic, 64)
    for (int64_t i = 0; i < n; ++i) {
      const auto& row = rows[i];
      const size_t m = std::min<size_t>(row.size(), static_cast<size_t>(scan));
      for (size_t x = 0; x < m; ++x)
        for (size_t y = x + 1; y < m; ++y) {
          const uint64_t key = pack(row[x], row[y]);
          mine[static_cast<int>(((key * 0x9E3779B97F4A7C15ull) >> 32) % static_cast<uint64_t>(buckets))].push_back(key);
        }
    }
  }
  std::vector<std::vector<Candidate>> found(buckets);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int b = 0; b < buckets; ++b) {
    std::vector<uint64_t> keys;
    for (int t = 0; t < threads; ++t) keys.insert(keys.end(), filed[t][b].begin(), filed[t][b].end());
    std::sort(keys.begin(), keys.end());
    for (size_t k = 0; k < keys.size();) {
      size_t e = k;
      while (e < keys.size() && keys[e] == keys[k]) ++e;
      if (static_cast<int64_t>(e - k) >= min_rows) found[b].push_back({static_cast<int64_t>(e - k), keys[k]});
      k = e;
    }
  }
  std::vector<Candidate> all;
  for (const auto& f : found) all.insert(all.end(), f.begin(), f.end());
  std::sort(all.begin(), all.end(),
            [](const Candidate& p, const Candidate& q) { return p.rows != q.rows ? p.rows > q.rows : p.key < q.key; });
  return all;
}

// Keys counted in a round when each row offers its first `scan` ids.
int64_t keys_at(const std::vector<std::vector<int64_t>>& rows, int scan) {
  int64_t total = 0;
  for (const auto& row : rows) {
    const int64_t m = std::min<int64_t>(static_cast<int64_t>(row.size()), scan);
    total += m * (m - 1) / 2;
  }
  return total;
}

}  // namespace

SharedPairs find_shared_pairs(const Graph& A, int64_t row_begin, int64_t row_end, const SharedPairsOptions& o) {
  STRATA_CHECK(0 <= row_begin && row_begin <= row_end && row_end <= A.num_rows(),
               "shared pairs: rows [{}, {}) are not a range of the graph's {} rows", row_begin, row_end, A.num_rows());
  STRATA_CHECK(o.rounds >= 0, "shared pairs: rounds is {}, expected 0 or more", o.rounds);
  STRATA_CHECK(o.scan >= 2, "shared pairs: scan is {}, expected at least 2 (ids per row to pair)", o.scan);
  STRATA_CHECK(o.min_rows >= 3,
               "shared pairs: min_rows is {}, expected at least 3 (a sum costs two gathers and saves one per row)",
               o.min_rows);
  STRATA_CHECK(o.max_keys >= 1, "shared pairs: max_keys is {}, expected at least 1", o.max_keys);
  STRATA_CHECK(A.num_cols() < kIdLimit, "shared pairs: the graph has {} columns, more than the {} ids a pair key holds",
               A.num_cols(), kIdLimit);
  SharedPairs s;
  s.cols = A.num_cols();
  s.row_begin = row_begin;
  s.row_end = row_end;
  const int64_t n = row_end - row_begin;
  std::vector<std::vector<int64_t>> rows(n);
  const int64_t* ip = A.indptr_data();
  const bool wide = A.index_dtype() == DType::I64;
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t i = 0; i < n; ++i) {
    const int64_t b = ip[row_begin + i], e = ip[row_begin + i + 1];
    rows[i].resize(e - b);
    for (int64_t k = b; k < e; ++k)
      rows[i][k - b] = wide ? A.indices().data<int64_t>()[k] : A.indices().data<int32_t>()[k];
    std::sort(rows[i].begin(), rows[i].end());
  }
  int64_t next = s.cols;  // the next id a sum takes
  for (int round = 0; round < o.rounds; ++round) {
    int scan = o.scan;
    while (scan > 2 && keys_at(rows, scan) > o.max_keys) scan /= 2;
    const std::vector<Candidate> candidates = count_pairs(rows, scan, o.min_rows);
    // Each id in at most one pair of a round, so a row's rewrite does not depend on the
    // order it meets the pairs in.
    std::vector<int64_t> partner(next, -1), sum_of(next, -1);
    const int64_t first = s.sums();
    for (const Candidate& c : candidates) {
      const int64_t u = static_cast<int64_t>(c.key >> 32), v = static_cast<int64_t>(c.key & 0xffffffffu);
      if (u == v || partner[u] >= 0 || partner[v] >= 0) continue;
      STRATA_CHECK(next + s.sums() - first < kIdLimit, "shared pairs: more than {} ids", kIdLimit);
      partner[u] = v;
      partner[v] = u;
      sum_of[u] = sum_of[v] = next + (s.sums() - first);
      s.pair_a.push_back(u);
      s.pair_b.push_back(v);
    }
    const int64_t taken = s.sums() - first;
    if (taken == 0) break;
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t i = 0; i < n; ++i) {
      auto& row = rows[i];
      std::vector<int64_t> out;
      out.reserve(row.size());
      std::vector<char> used(row.size(), 0);  // a row may hold an id twice: each copy pairs once
      for (size_t x = 0; x < row.size(); ++x) {
        if (used[x]) continue;
        used[x] = 1;
        const int64_t u = row[x], v = partner[u];
        if (v < 0) {
          out.push_back(u);
          continue;
        }
        // An unused copy of v in this row (v > u lies after x; v < u lies before).
        auto it = std::lower_bound(row.begin(), row.end(), v);
        size_t y = static_cast<size_t>(it - row.begin());
        while (y < row.size() && row[y] == v && used[y]) ++y;
        if (y < row.size() && row[y] == v) {
          used[y] = 1;
          out.push_back(sum_of[u]);
        } else {
          out.push_back(u);
        }
      }
      std::sort(out.begin(), out.end());
      row = std::move(out);
    }
    next += taken;
    s.round_begin.push_back(s.sums());
  }
  s.indptr.reserve(n + 1);
  s.first_sum.reserve(n);
  for (const auto& row : rows) {
    const int64_t at = static_cast<int64_t>(s.indices.size());
    s.first_sum.push_back(at + (std::lower_bound(row.begin(), row.end(), s.cols) - row.begin()));
    s.indices.insert(s.indices.end(), row.begin(), row.end());
    s.indptr.push_back(static_cast<int64_t>(s.indices.size()));
  }
  return s;
}

std::vector<int64_t> expand_shared_row(const SharedPairs& s, int64_t row) {
  STRATA_CHECK(0 <= row && row + 1 < static_cast<int64_t>(s.indptr.size()),
               "shared pairs: row {} is not one of the {} covered rows", row, s.indptr.size() - 1);
  std::vector<int64_t> out, stack(s.indices.begin() + s.indptr[row], s.indices.begin() + s.indptr[row + 1]);
  while (!stack.empty()) {
    const int64_t id = stack.back();
    stack.pop_back();
    if (id < s.cols) {
      out.push_back(id);
    } else {
      stack.push_back(s.pair_a[id - s.cols]);
      stack.push_back(s.pair_b[id - s.cols]);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace strata::sc
