// Sparse formats a kernel can run over, as plan strings users write and records
// store: "csr", "coo", "dcsr", "dcsr:cols=128", "ell:w=8", "bsr:b=4", "hyb:c=2,B=5".
//
//   csr        rows -> columns (the canonical format every op program is written in)
//   coo        csr with rows and columns fused into one loop over non-zeros
//   dcsr       only the non-empty rows, each with its columns
//   dcsr:cols  the columns cut into tiles of `cols` columns; within each tile, its
//              non-empty rows (DCSR per tile). Kernels walk a task's rows tile by
//              tile, so the tile's rows of X stay in L1/L2 while every row of the
//              task reads them (pays on graphs with long rows: ogbl-ddi)
//   ell:w      every row padded to w slots; longer rows split into pieces of w
//   bsr:b      b x b dense blocks of the matrix that hold at least one non-zero
//   hyb:c,B    columns split into c equal ranges; within each, rows bucketed by
//              degree into ELL parts of widths 1, 2, 4, ..., 2^B; longer rows split
//              into pieces of 2^B (SparseTIR's hyb, §2.1)
//
// Widths, block sizes and part counts are compiled into kernels; row counts and
// the parts' arrays are run-time data built by the inspectors (inspectors.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::sc {

enum class FormatKind : uint8_t { Csr, Coo, Dcsr, Ell, Bsr, Hyb };

struct FormatSpec {
  FormatKind kind = FormatKind::Csr;
  int64_t width = 0;        // ell: slots per row
  int64_t block = 0;        // bsr: block size
  int64_t col_parts = 1;    // hyb: c
  int64_t max_bucket = 0;   // hyb: B (widest bucket 2^B)
  int64_t col_tile = 0;     // dcsr: columns per tile (0: one tile of all columns)

  static FormatSpec csr() { return {}; }
  // Parses a plan string; throws UserError naming `what` and listing valid forms.
  static FormatSpec parse(const std::string& s, const std::string& what = "format");
  std::string str() const;
  bool decomposed() const { return kind == FormatKind::Dcsr || kind == FormatKind::Ell || kind == FormatKind::Bsr || kind == FormatKind::Hyb; }
  // The ELL widths of the buckets (hyb, ell), in order.
  std::vector<int64_t> bucket_widths() const;
  // dcsr:cols: the number of column tiles over `cols` columns (at least one).
  int64_t tile_count(int64_t cols) const;
  bool operator==(const FormatSpec&) const = default;
};

}  // namespace strata::sc
