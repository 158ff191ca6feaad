// Inspectors: native, multi-threaded builders of each format's arrays from CSR.
// Every inspector works in two passes over contiguous row chunks (one per thread):
// count, prefix-sum the counts across chunks, fill. Rows therefore stay in
// ascending order inside every part, which the task partition relies on.
#include <omp.h>

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "core/timer.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/formats/inspected_format.h"

namespace strata::sc {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Contiguous row chunks, one per thread.
struct Chunks {
  int count;
  int64_t rows;
  int64_t begin(int t) const { return rows * t / count; }
  int64_t end(int t) const { return rows * (t + 1) / count; }
};
Chunks make_chunks(int64_t rows) {
  const int threads = std::max(1, omp_get_max_threads());
  return {static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads * 4, rows))), rows};
}

// Output rows of each task, balanced by the slots each row carries.
Tensor balance_rows(const std::vector<int64_t>& slots_before, int64_t rows, int64_t grain, int64_t& tasks) {
  const int64_t total = slots_before.empty() ? 0 : slots_before.back();
  tasks = std::max<int64_t>(1, std::min<int64_t>(std::max<int64_t>(rows, 1), ceil_div(std::max<int64_t>(total, 1), grain)));
  Tensor bounds = Tensor::empty({tasks + 1}, DType::I64);
  int64_t* b = bounds.data<int64_t>();
  b[0] = 0;
  b[tasks] = rows;
  for (int64_t t = 1; t < tasks; ++t) {
    const int64_t target = total * t / tasks;
    b[t] = std::lower_bound(slots_before.begin(), slots_before.begin() + rows + 1, target) - slots_before.begin();
    b[t] = std::max(b[t], b[t - 1]);
  }
  return bounds;
}

// Each part's outer-loop range of every task: positions of its sorted row ids.
template <class I>
Tensor part_tasks(const Tensor& row_ids, const Tensor& task_rows) {
  const int64_t T = task_rows.numel() - 1, n = row_ids.numel();
  Tensor out = Tensor::empty({T + 1}, DType::I64);
  const I* rows = row_ids.data<I>();
  for (int64_t t = 0; t <= T; ++t) {
    const int64_t r = task_rows.data<int64_t>()[t];
    out.data<int64_t>()[t] = std::lower_bound(rows, rows + n, static_cast<I>(std::min<int64_t>(r, INT64_MAX))) - rows;
  }
  return out;
}

template <class I>
InspectedFormat inspect_ell_parts(const Graph& A, const FormatSpec& spec, int64_t grain) {
  InspectedFormat F;
  const int64_t m = A.num_rows(), n = A.num_cols();
  const std::vector<int64_t> widths = spec.bucket_widths();
  const int nb = static_cast<int>(widths.size());
  const int64_t c = spec.kind == FormatKind::Hyb ? spec.col_parts : 1;
  const int64_t colw = std::max<int64_t>(1, ceil_div(n, c));
  const int P = static_cast<int>(c) * nb;
  const int64_t* ip = A.indptr_data();
  const I* col = A.indices().data<I>();
  const DType idt = A.index_dtype();

  auto bucket_of = [&](int64_t d) {
    for (int b = 0; b < nb; ++b)
      if (widths[b] >= d) return b;
    return nb - 1;
  };
  // Calls fn(part, row, first position, end position, pieces) for every
  // non-empty (row, column part) pair of rows [lo, hi), in row order.
  auto walk = [&](int64_t lo, int64_t hi, auto&& fn) {
    for (int64_t r = lo; r < hi; ++r) {
      int64_t p = ip[r];
      for (int64_t k = 0; k < c; ++k) {
        const int64_t limit = (k + 1) * colw;
        int64_t q = p;
        while (q < ip[r + 1] && static_cast<int64_t>(col[q]) < limit) ++q;
        const int64_t d = q - p;
        if (d > 0) {
          const int b = bucket_of(d);
          fn(static_cast<int>(k) * nb + b, r, p, q, ceil_div(d, widths[b]));
        }
        p = q;
      }
    }
  };

  const Chunks ch = make_chunks(m);
  std::vector<std::vector<int64_t>> count(ch.count, std::vector<int64_t>(P, 0));
  std::vector<int64_t> row_slots(static_cast<size_t>(m) + 1, 0);
#pragma omp parallel for schedule(dynamic, 1)
  for (int t = 0; t < ch.count; ++t)
    walk(ch.begin(t), ch.end(t), [&](int part, int64_t r, int64_t, int64_t, int64_t pieces) {
      count[t][part] += pieces;
      row_slots[r + 1] += pieces * widths[part % nb];
    });
  std::partial_sum(row_slots.begin(), row_slots.end(), row_slots.begin());
  // offset[t][part]: where chunk t's pieces of `part` start.
  std::vector<int64_t> total(P, 0);
  std::vector<std::vector<int64_t>> offset(ch.count, std::vector<int64_t>(P, 0));
  for (int t = 0; t < ch.count; ++t)
    for (int part = 0; part < P; ++part) {
      offset[t][part] = total[part];
      total[part] += count[t][part];
    }
  F.parts.resize(P);
  for (int part = 0; part < P; ++part) {
    FormatPart& fp = F.parts[part];
    fp.name = fmt::format("p{}", part);
    fp.kind = PartKind::RowSubsetEll;
    fp.width = widths[part % nb];
    fp.col_begin = std::min(n, (part / nb) * colw);
    fp.col_end = std::min(n, (part / nb + 1) * colw);
    fp.outer = total[part];
    fp.slots = total[part] * fp.width;
    fp.arrays["rptr"] = Tensor::from_list<int64_t>({0, total[part]});
    fp.arrays["rows"] = Tensor::empty({total[part]}, idt);
    fp.arrays["cols"] = Tensor::empty({fp.slots}, idt);
    fp.arrays["eid"] = Tensor::empty({fp.slots}, idt);
    fp.scalars["n"] = total[part];
  }
  std::vector<I*> rows_out(P), cols_out(P), eid_out(P);
  for (int part = 0; part < P; ++part) {
    rows_out[part] = F.parts[part].arrays["rows"].data<I>();
    cols_out[part] = F.parts[part].arrays["cols"].data<I>();
    eid_out[part] = F.parts[part].arrays["eid"].data<I>();
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (int t = 0; t < ch.count; ++t) {
    std::vector<int64_t> next = offset[t];
    walk(ch.begin(t), ch.end(t), [&](int part, int64_t r, int64_t s, int64_t e, int64_t pieces) {
      const int64_t w = widths[part % nb];
      for (int64_t q = 0; q < pieces; ++q) {
        const int64_t o = next[part]++;
        rows_out[part][o] = static_cast<I>(r);
        const int64_t first = s + q * w;
        for (int64_t k = 0; k < w; ++k) {
          const int64_t pos = first + k;
          // Padding repeats the piece's first column (its X row is already in
          // cache) with edge id -1, which the kernels read as weight 0.
          cols_out[part][o * w + k] = pos < e ? col[pos] : col[first];
          eid_out[part][o * w + k] = pos < e ? static_cast<I>(pos) : static_cast<I>(-1);
        }
      }
    });
  }
  for (auto& fp : F.parts) {
    fp.real = 0;
    const I* e = fp.arrays["eid"].data<I>();
    for (int64_t k = 0; k < fp.slots; ++k) fp.real += e[k] >= 0;
  }
  F.task_rows = balance_rows(row_slots, m, grain, F.num_tasks);
  for (auto& fp : F.parts) fp.arrays["tasks"] = part_tasks<I>(fp.arrays["rows"], F.task_rows);
  return F;
}

template <class I>
InspectedFormat inspect_dcsr(const Graph& A, int64_t grain) {
  InspectedFormat F;
  const int64_t m = A.num_rows(), nnz = A.nnz();
  const DType idt = A.index_dtype();
  std::vector<int64_t> nonempty;
  for (int64_t r = 0; r < m; ++r)
    if (A.degree(r) > 0) nonempty.push_back(r);
  const int64_t k = static_cast<int64_t>(nonempty.size());
  FormatPart p;
  p.name = "p0";
  p.kind = PartKind::Dcsr;
  p.col_end = A.num_cols();
  p.outer = k;
  p.slots = p.real = nnz;
  p.arrays["rptr"] = Tensor::from_list<int64_t>({0, k});
  p.arrays["rows"] = Tensor::empty({k}, idt);
  p.arrays["cptr"] = Tensor::empty({k + 1}, DType::I64);
  p.arrays["eid"] = Tensor::empty({nnz}, idt);
  // Empty rows hold no columns, so the column array is CSR's own.
  p.arrays["cols"] = A.indices();
  I* rows = p.arrays["rows"].data<I>();
  int64_t* cptr = p.arrays["cptr"].data<int64_t>();
  cptr[0] = 0;
  for (int64_t q = 0; q < k; ++q) {
    rows[q] = static_cast<I>(nonempty[q]);
    cptr[q + 1] = A.row_end(nonempty[q]);
  }
  I* eid = p.arrays["eid"].data<I>();
#pragma omp parallel for schedule(static)
  for (int64_t q = 0; q < nnz; ++q) eid[q] = static_cast<I>(q);
  p.scalars["n"] = k;
  std::vector<int64_t> before(A.indptr_data(), A.indptr_data() + m + 1);
  F.task_rows = balance_rows(before, m, grain, F.num_tasks);
  p.arrays["tasks"] = part_tasks<I>(p.arrays["rows"], F.task_rows);
  F.parts.push_back(std::move(p));
  return F;
}

// DCSR over column tiles of `tile` columns: tile-major, each tile's non-empty rows
// in ascending order with their columns in that tile. The tasks are row ranges
// (balanced by non-zeros); p0_tasks holds, for tile o and task t, the first of
// the tile's row entries at or after the task's first row, at o * (T + 1) + t, so
// each task walks every tile and only its own rows in each.
template <class I>
InspectedFormat inspect_dcsr_tiles(const Graph& A, const FormatSpec& spec, int64_t grain) {
  InspectedFormat F;
  const int64_t m = A.num_rows(), n = A.num_cols(), nnz = A.nnz();
  const int64_t tile = spec.col_tile, tiles = spec.tile_count(n);
  const int64_t* ip = A.indptr_data();
  const I* col = A.indices().data<I>();
  const DType idt = A.index_dtype();
  std::vector<int64_t> before(ip, ip + m + 1);
  F.task_rows = balance_rows(before, m, grain, F.num_tasks);
  // Every task holds one range per tile: refuse a layout whose ranges alone would
  // outweigh the graph many times over.
  const int64_t range_bytes = tiles * (F.num_tasks + 1) * 8;
  STRATA_CHECK(range_bytes <= (int64_t{256} << 20) || range_bytes <= 4 * A.indices().nbytes(),
               "dcsr:cols={}: {} column tiles x {} tasks need {} MiB of task ranges; use wider tiles or a coarser "
               "grain", tile, tiles, F.num_tasks, range_bytes >> 20);
  // Calls fn(tile, row, first position, end position) for every non-empty
  // (row, tile) segment of rows [lo, hi), in row order.
  auto walk = [&](int64_t lo, int64_t hi, auto&& fn) {
    for (int64_t r = lo; r < hi; ++r)
      for (int64_t p = ip[r]; p < ip[r + 1];) {
        const int64_t o = static_cast<int64_t>(col[p]) / tile, limit = (o + 1) * tile;
        int64_t q = p + 1;
        while (q < ip[r + 1] && static_cast<int64_t>(col[q]) < limit) ++q;
        fn(o, r, p, q);
        p = q;
      }
  };
  const Chunks ch = make_chunks(m);
  // Per chunk and tile: row entries and non-zeros.
  std::vector<std::vector<int64_t>> entries(ch.count, std::vector<int64_t>(tiles, 0)), nonzeros = entries;
#pragma omp parallel for schedule(dynamic, 1)
  for (int t = 0; t < ch.count; ++t)
    walk(ch.begin(t), ch.end(t), [&](int64_t o, int64_t, int64_t p, int64_t q) {
      ++entries[t][o];
      nonzeros[t][o] += q - p;
    });
  // Tile-major offsets of every chunk's entries and non-zeros.
  std::vector<int64_t> rptr(static_cast<size_t>(tiles) + 1, 0);
  std::vector<std::vector<int64_t>> entry_at(ch.count, std::vector<int64_t>(tiles)), nz_at = entry_at;
  int64_t e = 0, z = 0;
  for (int64_t o = 0; o < tiles; ++o) {
    rptr[o] = e;
    for (int t = 0; t < ch.count; ++t) {
      entry_at[t][o] = e;
      nz_at[t][o] = z;
      e += entries[t][o];
      z += nonzeros[t][o];
    }
  }
  rptr[tiles] = e;
  FormatPart p;
  p.name = "p0";
  p.kind = PartKind::Dcsr;
  p.width = tile;
  p.col_end = n;
  p.outer = e;
  p.slots = p.real = nnz;
  p.arrays["rptr"] = Tensor::from_vector(rptr);
  p.arrays["rows"] = Tensor::empty({e}, idt);
  p.arrays["cptr"] = Tensor::empty({e + 1}, DType::I64);
  p.arrays["cols"] = Tensor::empty({nnz}, idt);
  p.arrays["eid"] = Tensor::empty({nnz}, idt);
  I* rows = p.arrays["rows"].data<I>();
  int64_t* cptr = p.arrays["cptr"].data<int64_t>();
  I* cols = p.arrays["cols"].data<I>();
  I* eid = p.arrays["eid"].data<I>();
  cptr[e] = nnz;
#pragma omp parallel for schedule(dynamic, 1)
  for (int t = 0; t < ch.count; ++t) {
    std::vector<int64_t> next_e = entry_at[t], next_z = nz_at[t];
    walk(ch.begin(t), ch.end(t), [&](int64_t o, int64_t r, int64_t first, int64_t end) {
      const int64_t at = next_e[o]++;
      rows[at] = static_cast<I>(r);
      cptr[at] = next_z[o];
      for (int64_t pos = first; pos < end; ++pos, ++next_z[o]) {
        cols[next_z[o]] = col[pos];
        eid[next_z[o]] = static_cast<I>(pos);
      }
    });
  }
  p.scalars["n"] = e;
  p.scalars["tiles"] = tiles;
  const int64_t T = F.num_tasks;
  Tensor ranges = Tensor::empty({tiles * (T + 1)}, DType::I64);
  int64_t* rg = ranges.data<int64_t>();
  const int64_t* task_rows = F.task_rows.data<int64_t>();
#pragma omp parallel for schedule(static)
  for (int64_t o = 0; o < tiles; ++o)
    for (int64_t t = 0; t <= T; ++t)
      rg[o * (T + 1) + t] = std::lower_bound(rows + rptr[o], rows + rptr[o + 1],
                                             static_cast<I>(std::min<int64_t>(task_rows[t], m))) - rows;
  p.arrays["tasks"] = ranges;
  F.parts.push_back(std::move(p));
  return F;
}

template <class I>
InspectedFormat inspect_bsr(const Graph& A, int64_t b, int64_t grain) {
  InspectedFormat F;
  const int64_t m = A.num_rows(), n = A.num_cols();
  const int64_t mb = ceil_div(std::max<int64_t>(m, 1), b), nbc = ceil_div(std::max<int64_t>(n, 1), b);
  const DType idt = A.index_dtype();
  const int64_t* ip = A.indptr_data();
  const I* col = A.indices().data<I>();
  auto block_cols = [&](int64_t io, std::vector<int64_t>& out) {
    out.clear();
    for (int64_t r = io * b; r < std::min(m, io * b + b); ++r)
      for (int64_t p = ip[r]; p < ip[r + 1]; ++p) out.push_back(static_cast<int64_t>(col[p]) / b);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  };
  std::vector<int64_t> bptr(static_cast<size_t>(mb) + 1, 0);
#pragma omp parallel
  {
    std::vector<int64_t> tmp;
#pragma omp for schedule(dynamic, 64)
    for (int64_t io = 0; io < mb; ++io) {
      block_cols(io, tmp);
      bptr[io + 1] = static_cast<int64_t>(tmp.size());
    }
  }
  std::partial_sum(bptr.begin(), bptr.end(), bptr.begin());
  const int64_t blocks = bptr[mb];
  FormatPart p;
  p.name = "p0";
  p.kind = PartKind::Bsr;
  p.width = b;
  p.col_end = n;
  p.outer = mb;
  p.slots = blocks * b * b;
  p.real = A.nnz();
  p.arrays["bptr"] = Tensor::from_vector(bptr);
  p.arrays["bcols"] = Tensor::empty({blocks}, idt);
  p.arrays["eid"] = Tensor::full({p.slots}, idt, -1);
  p.scalars["mb"] = mb;
  p.scalars["nb"] = nbc;
  p.scalars["blocks"] = blocks;
  I* bcols = p.arrays["bcols"].data<I>();
  I* eid = p.arrays["eid"].data<I>();
  std::string duplicate;
#pragma omp parallel
  {
    std::vector<int64_t> tmp;
#pragma omp for schedule(dynamic, 64)
    for (int64_t io = 0; io < mb; ++io) {
      block_cols(io, tmp);
      for (size_t q = 0; q < tmp.size(); ++q) bcols[bptr[io] + static_cast<int64_t>(q)] = static_cast<I>(tmp[q]);
      for (int64_t r = io * b; r < std::min(m, io * b + b); ++r) {
        for (int64_t pos = ip[r]; pos < ip[r + 1]; ++pos) {
          const int64_t c = static_cast<int64_t>(col[pos]);
          const int64_t blk = bptr[io] + (std::lower_bound(tmp.begin(), tmp.end(), c / b) - tmp.begin());
          I& slot = eid[(blk * b + (r - io * b)) * b + c % b];
          if (slot >= 0) {
#pragma omp critical
            if (duplicate.empty()) duplicate = fmt::format("row {}, column {}", r, c);
          }
          slot = static_cast<I>(pos);
        }
      }
    }
  }
  STRATA_CHECK(duplicate.empty(), "bsr: the graph stores the entry ({}) more than once; BSR holds one value per "
                                  "position (merge duplicates first)", duplicate);
  // Tasks: block rows balanced by blocks; output rows follow.
  int64_t T = 0;
  Tensor block_tasks = balance_rows(bptr, mb, std::max<int64_t>(1, grain / (b * b)), T);
  F.num_tasks = T;
  F.task_rows = Tensor::empty({T + 1}, DType::I64);
  for (int64_t t = 0; t <= T; ++t)
    F.task_rows.data<int64_t>()[t] = std::min(m, block_tasks.data<int64_t>()[t] * b);
  p.arrays["tasks"] = block_tasks;
  F.parts.push_back(std::move(p));
  return F;
}

}  // namespace

std::string FormatPart::describe() const {
  switch (kind) {
    case PartKind::RowSubsetEll: return fmt::format("ell w={} cols [{}, {})", width, col_begin, col_end);
    case PartKind::Dcsr:
      return width > 0 ? fmt::format("dcsr, {} column tiles of {}", scalars.count("tiles") ? scalars.at("tiles") : 0, width)
                       : "dcsr";
    case PartKind::Bsr: return fmt::format("bsr b={}", width);
  }
  return "?";
}

int64_t InspectedFormat::slots() const {
  if (parts.empty()) return nnz;
  int64_t s = 0;
  for (const auto& p : parts) s += p.slots;
  return s;
}

double InspectedFormat::padding_ratio() const {
  const int64_t s = slots();
  return s > 0 ? static_cast<double>(s - nnz) / static_cast<double>(s) : 0.0;
}

int64_t InspectedFormat::memory_bytes() const {
  int64_t b = task_rows.defined() ? task_rows.nbytes() : 0;
  for (const auto& p : parts)
    for (const auto& [k, t] : p.arrays) b += t.nbytes();
  return b;
}

bool needs_inspection(const FormatSpec& spec) { return spec.kind != FormatKind::Csr; }

void InspectedFormat::bind(KernelArgs& args) const {
  // Device arrays bind by their pointers; KernelArgs::buffer(Tensor) takes host ones.
  auto buffer = [&](const std::string& name, const Tensor& t) {
    if (t.device().is_cpu())
      args.buffer(name, t);
    else
      args.buffer(name, t.raw_data(), t.dtype(), t.numel());
  };
  for (const auto& [k, t] : arrays) buffer(k, t);
  for (const auto& p : parts) {
    for (const auto& [k, t] : p.arrays) buffer(p.name + "_" + k, t);
    for (const auto& [k, v] : p.scalars) args.scalar(p.name + "_" + k, v);
  }
  buffer("task_rows", task_rows);
  args.scalar("num_tasks", num_tasks);
}

InspectedFormat InspectedFormat::to(Device device) const {
  auto move = [&](Tensor& t) {
    if (t.defined()) t = t.to(device);
  };
  InspectedFormat out = *this;
  for (auto& [k, t] : out.arrays) move(t);
  for (auto& p : out.parts)
    for (auto& [k, t] : p.arrays) move(t);
  move(out.task_rows);
  return out;
}

namespace {
// COO: row-aligned ranges of non-zeros, balanced by non-zeros.
InspectedFormat inspect_coo(const Graph& A, int64_t grain) {
  InspectedFormat F;
  const int64_t m = A.num_rows();
  std::vector<int64_t> before(A.indptr_data(), A.indptr_data() + m + 1);
  F.task_rows = balance_rows(before, m, grain, F.num_tasks);
  Tensor nz = Tensor::empty({F.num_tasks + 1}, DType::I64);
  for (int64_t t = 0; t <= F.num_tasks; ++t) nz.data<int64_t>()[t] = A.indptr_data()[F.task_rows.data<int64_t>()[t]];
  F.arrays["coo_tasks"] = nz;
  return F;
}
}  // namespace

InspectedFormat inspect_format(const Graph& A, const FormatSpec& spec, int64_t grain) {
  STRATA_CHECK(needs_inspection(spec), "inspect_format: {} needs no inspection", spec.str());
  STRATA_CHECK(A.columns_sorted(), "inspect_format: the graph's columns must be sorted within rows");
  STRATA_CHECK(grain >= 1, "inspect_format: grain must be positive, got {}", grain);
  Timer timer;
  InspectedFormat F = dispatch_index(A.index_dtype(), [&](auto zero) {
    using I = decltype(zero);
    switch (spec.kind) {
      case FormatKind::Coo: return inspect_coo(A, grain);
      case FormatKind::Dcsr:
        return spec.col_tile > 0 ? inspect_dcsr_tiles<I>(A, spec, grain) : inspect_dcsr<I>(A, grain);
      case FormatKind::Bsr: return inspect_bsr<I>(A, spec.block, grain);
      default: return inspect_ell_parts<I>(A, spec, grain);
    }
  });
  F.spec = spec;
  F.rows = A.num_rows();
  F.cols = A.num_cols();
  F.nnz = A.nnz();
  F.inspect_ms = timer.ms();
  return F;
}

}  // namespace strata::sc
