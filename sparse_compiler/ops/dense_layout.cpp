#include "sparse_compiler/ops/dense_layout.h"

#include <fmt/format.h>

#include <cstring>

#include "core/error.h"

namespace strata::sc {

DenseLayout DenseLayout::parse(const std::string& s, const std::string& what) {
  if (s == "row") return row();
  auto number = [&](const std::string& tail) {
    int64_t v = 0;
    size_t used = 0;
    try {
      v = std::stoll(tail, &used);
    } catch (...) {
      used = 0;
    }
    STRATA_CHECK(used == tail.size() && !tail.empty() && v >= 1 && v <= 4096,
                 "{}: '{}' needs a whole number in [1, 4096] after the colon", what, s);
    return v;
  };
  if (s.rfind("pad:", 0) == 0) return padded(number(s.substr(4)));
  if (s.rfind("panel:", 0) == 0) return panel(number(s.substr(6)));
  STRATA_FAIL("{}: unknown layout '{}' (expected row, pad:P or panel:W)", what, s);
}

std::string DenseLayout::str() const {
  switch (kind) {
    case Kind::Row: return "row";
    case Kind::Padded: return fmt::format("pad:{}", param);
    case Kind::Panel: return fmt::format("panel:{}", param);
  }
  return "?";
}

bool DenseLayout::fits(int64_t feat, const std::string& what) const {
  const bool ok = kind != Kind::Panel || (param >= 1 && feat % param == 0);
  if (!ok && !what.empty())
    STRATA_FAIL("{}: layout {} needs a feature size divisible by {}, got {}", what, str(), param, feat);
  return ok;
}

Shape DenseLayout::storage_shape(int64_t rows, int64_t feat) const {
  switch (kind) {
    case Kind::Row: return {rows, feat};
    case Kind::Padded: return {rows, feat + param};
    case Kind::Panel: return {feat / param, rows, param};
  }
  return {};
}

Tensor to_layout(const Tensor& X, const DenseLayout& layout) {
  check_tensor(X, "to_layout input", DType::F32, 2);
  STRATA_CHECK(X.device().is_cpu(), "to_layout: input must be on the CPU, got {}", X.device().str());
  const int64_t rows = X.shape()[0], feat = X.shape()[1];
  layout.fits(feat, "to_layout");
  if (layout.is_row()) return X.clone();
  Tensor out = Tensor::empty(layout.storage_shape(rows, feat), DType::F32);
  const float* src = X.data<float>();
  float* dst = out.data<float>();
  if (layout.kind == DenseLayout::Kind::Padded) {
    const int64_t ld = feat + layout.param;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(dst + r * ld, src + r * feat, sizeof(float) * feat);
      std::memset(dst + r * ld + feat, 0, sizeof(float) * layout.param);
    }
  } else {
    const int64_t W = layout.param, T = feat / W;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t t = 0; t < T; ++t) std::memcpy(dst + (t * rows + r) * W, src + r * feat + t * W, sizeof(float) * W);
  }
  return out;
}

Tensor from_layout(const Tensor& stored, const DenseLayout& layout, int64_t rows, int64_t feat) {
  check_tensor(stored, "from_layout input", DType::F32, static_cast<int>(layout.storage_shape(rows, feat).size()));
  check_shape(stored, "from_layout input", layout.storage_shape(rows, feat));
  if (layout.is_row()) return stored.clone();
  Tensor out = Tensor::empty({rows, feat}, DType::F32);
  const float* src = stored.data<float>();
  float* dst = out.data<float>();
  if (layout.kind == DenseLayout::Kind::Padded) {
    const int64_t ld = feat + layout.param;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + r * feat, src + r * ld, sizeof(float) * feat);
  } else {
    const int64_t W = layout.param, T = feat / W;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t t = 0; t < T; ++t) std::memcpy(dst + r * feat + t * W, src + (t * rows + r) * W, sizeof(float) * W);
  }
  return out;
}

}  // namespace strata::sc
