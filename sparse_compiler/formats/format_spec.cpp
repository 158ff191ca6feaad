#include "sparse_compiler/formats/format_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.h"

namespace strata::sc {
namespace {

constexpr const char* kForms = "csr, coo, dcsr, dcsr:cols=<columns per tile>, ell:w=<slots>, bsr:b=<block>, hyb:c=<parts>,B=<log2 widest bucket>";

std::map<std::string, int64_t> parse_params(const std::string& body, const std::string& whole, const std::string& what) {
  std::map<std::string, int64_t> out;
  STRATA_CHECK(body.empty() || body.back() != ',', "{}: '{}' ends in a comma (expected key=value after it)", what,
               whole);
  size_t pos = 0;
  while (pos < body.size()) {
    size_t comma = body.find(',', pos);
    if (comma == std::string::npos) comma = body.size();
    const std::string item = body.substr(pos, comma - pos);
    const size_t eq = item.find('=');
    STRATA_CHECK(eq != std::string::npos && eq > 0, "{}: '{}' has a parameter '{}' without a value (expected key=value)",
                 what, whole, item);
    const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    STRATA_CHECK(!out.count(key), "{}: '{}': parameter {} is given twice", what, whole, key);
    try {
      size_t used = 0;
      const long long v = std::stoll(val, &used);
      STRATA_CHECK(used == val.size(), "");
      out[key] = v;
    } catch (const std::exception&) {
      STRATA_FAIL("{}: '{}': parameter {} must be an integer, got '{}'", what, whole, key, val);
    }
    pos = comma + 1;
  }
  return out;
}

int64_t take(std::map<std::string, int64_t>& p, const std::string& key, const std::string& whole, const std::string& what) {
  auto it = p.find(key);
  STRATA_CHECK(it != p.end(), "{}: '{}' needs parameter {}", what, whole, key);
  const int64_t v = it->second;
  p.erase(it);
  return v;
}

}  // namespace

FormatSpec FormatSpec::parse(const std::string& s, const std::string& what) {
  const size_t colon = s.find(':');
  const std::string name = s.substr(0, colon);
  auto params = colon == std::string::npos ? std::map<std::string, int64_t>{} : parse_params(s.substr(colon + 1), s, what);
  FormatSpec f;
  if (name == "csr") {
    f.kind = FormatKind::Csr;
  } else if (name == "coo") {
    f.kind = FormatKind::Coo;
  } else if (name == "dcsr") {
    f.kind = FormatKind::Dcsr;
    if (params.count("cols")) {
      f.col_tile = take(params, "cols", s, what);
      STRATA_CHECK(f.col_tile >= 1 && f.col_tile <= (int64_t{1} << 30), "{}: '{}': cols must be in [1, 2^30], got {}",
                   what, s, f.col_tile);
    }
  } else if (name == "ell") {
    f.kind = FormatKind::Ell;
    f.width = take(params, "w", s, what);
    STRATA_CHECK(f.width >= 1 && f.width <= 4096, "{}: '{}': w must be in [1, 4096], got {}", what, s, f.width);
  } else if (name == "bsr") {
    f.kind = FormatKind::Bsr;
    f.block = take(params, "b", s, what);
    STRATA_CHECK(f.block >= 2 && f.block <= 64, "{}: '{}': b must be in [2, 64], got {}", what, s, f.block);
  } else if (name == "hyb") {
    f.kind = FormatKind::Hyb;
    f.col_parts = take(params, "c", s, what);
    f.max_bucket = take(params, "B", s, what);
    STRATA_CHECK(f.col_parts >= 1 && f.col_parts <= 64, "{}: '{}': c must be in [1, 64], got {}", what, s, f.col_parts);
    STRATA_CHECK(f.max_bucket >= 0 && f.max_bucket <= 10, "{}: '{}': B must be in [0, 10], got {}", what, s,
                 f.max_bucket);
  } else {
    STRATA_FAIL("{}: unknown format '{}' (expected one of: {})", what, s, kForms);
  }
  STRATA_CHECK(params.empty(), "{}: '{}': unknown parameter {} for format {}", what, s, params.begin()->first, name);
  return f;
}

std::string FormatSpec::str() const {
  switch (kind) {
    case FormatKind::Csr: return "csr";
    case FormatKind::Coo: return "coo";
    case FormatKind::Dcsr: return col_tile > 0 ? fmt::format("dcsr:cols={}", col_tile) : "dcsr";
    case FormatKind::Ell: return fmt::format("ell:w={}", width);
    case FormatKind::Bsr: return fmt::format("bsr:b={}", block);
    case FormatKind::Hyb: return fmt::format("hyb:c={},B={}", col_parts, max_bucket);
  }
  return "?";
}

int64_t FormatSpec::tile_count(int64_t cols) const {
  return col_tile > 0 ? std::max<int64_t>(1, (cols + col_tile - 1) / col_tile) : 1;
}

std::vector<int64_t> FormatSpec::bucket_widths() const {
  if (kind == FormatKind::Ell) return {width};
  std::vector<int64_t> w;
  if (kind == FormatKind::Hyb)
    for (int64_t k = 0; k <= max_bucket; ++k) w.push_back(int64_t{1} << k);
  return w;
}

}  // namespace strata::sc
