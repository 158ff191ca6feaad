#include "models/checkpoint.h"

#include <cstring>
#include <set>

#include "core/autograd.h"
#include "core/file_util.h"
#include "core/hash.h"

namespace strata::nn {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'C', 'K'};
constexpr size_t kPrefixBytes = 24;
constexpr size_t kChecksumBytes = 16;
constexpr int64_t kAlign = 64;

int64_t align_up(int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <class T>
T get(const std::string& in, size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof v);
  return v;
}

DType dtype_from_name(const std::string& name, const std::string& file) {
  for (DType d : {DType::F32, DType::F64, DType::I32, DType::I64})
    if (dtype_name(d) == name) return d;
  STRATA_FAIL("checkpoint '{}': unknown tensor dtype '{}'", file, name);
}

// Bytes of a tensor of `shape`, or -1 when a dimension is negative or the size overflows.
int64_t shape_bytes(const Shape& shape, DType dtype) {
  int64_t n = dtype_size(dtype);
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

std::string shape_bytes_str(const Shape& shape, DType dtype) {
  const int64_t n = shape_bytes(shape, dtype);
  return n >= 0 ? std::to_string(n) : "no valid size";
}

// A header number that must be an integer (a float or a huge unsigned would not convert exactly).
int64_t integer_entry(const nlohmann::ordered_json& v, const char* what, const std::string& tensor,
                      const std::string& file) {
  STRATA_CHECK(
      v.is_number_integer() && (!v.is_number_unsigned() || v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)),
      "checkpoint '{}': tensor '{}' has {} {}, expected an integer", file, tensor, what, v.dump());
  return v.get<int64_t>();
}

}  // namespace

void write_checkpoint(const std::filesystem::path& path, const Checkpoint& ckpt) {
  nlohmann::ordered_json index = nlohmann::ordered_json::array();
  int64_t offset = 0;
  auto add = [&](const std::string& section, const std::vector<std::pair<std::string, Tensor>>& tensors) {
    for (const auto& [name, t] : tensors) {
      STRATA_ASSERT(t.defined() && t.device().is_cpu(), "checkpoint tensor '{}' must be a defined host tensor", name);
      index.push_back({{"name", section + "/" + name},
                       {"dtype", dtype_name(t.dtype())},
                       {"shape", t.shape()},
                       {"offset", offset},
                       {"bytes", t.nbytes()}});
      offset = align_up(offset + t.nbytes());
    }
  };
  add("model", ckpt.model);
  add("optimizer", ckpt.optimizer);
  const std::string header = nlohmann::ordered_json{{"meta", ckpt.meta}, {"tensors", index}}.dump();

  std::string out;
  out.append(kMagic, sizeof kMagic);
  put<uint32_t>(out, kCheckpointVersion);
  put<uint32_t>(out, 0);
  put<uint64_t>(out, header.size());
  out += header;
  out.resize(static_cast<size_t>(align_up(static_cast<int64_t>(out.size()))), '\0');
  const size_t payload = out.size();
  out.resize(payload + static_cast<size_t>(offset), '\0');
  size_t k = 0;
  for (const auto* tensors : {&ckpt.model, &ckpt.optimizer})
    for (const auto& [name, t] : *tensors) {
      const int64_t at = index[k++]["offset"].get<int64_t>();
      std::memcpy(out.data() + payload + at, t.raw_data(), static_cast<size_t>(t.nbytes()));
    }
  const Hash128 h = hash_bytes(out.data(), out.size());
  put<uint64_t>(out, h.lo);
  put<uint64_t>(out, h.hi);

  AtomicFile file(path);
  file.write(out);
  file.commit();
}

Checkpoint read_checkpoint(const std::filesystem::path& path) {
  const std::string file = path.string();
  STRATA_CHECK(std::filesystem::exists(path), "checkpoint '{}' does not exist", file);
  const std::string in = read_file(path);
  STRATA_CHECK(in.size() >= sizeof kMagic && std::memcmp(in.data(), kMagic, sizeof kMagic) == 0,
               "'{}' is not a Strata checkpoint (no STRATACK header)", file);
  STRATA_CHECK(in.size() >= kPrefixBytes + kChecksumBytes,
               "checkpoint '{}': checksum mismatch: the file is truncated ({} bytes)", file, in.size());
  const uint32_t version = get<uint32_t>(in, 8);
  const size_t body = in.size() - kChecksumBytes;
  const Hash128 want{get<uint64_t>(in, body), get<uint64_t>(in, body + 8)};
  const Hash128 got = hash_bytes(in.data(), body);
  STRATA_CHECK(got == want,
               "checkpoint '{}': checksum mismatch (stored {}, computed {}): the file is corrupt or truncated", file,
               want.hex(), got.hex());
  STRATA_CHECK(version >= 1, "checkpoint '{}' has format version 0; versions start at 1", file);
  STRATA_CHECK(version <= kCheckpointVersion,
               "checkpoint '{}' has format version {}, newer than this Strata reads ({})", file, version,
               kCheckpointVersion);
  const uint64_t header_bytes = get<uint64_t>(in, 16);
  STRATA_CHECK(header_bytes <= body - kPrefixBytes, "checkpoint '{}': header length {} runs past the end", file,
               header_bytes);
  nlohmann::ordered_json header;
  try {
    header = nlohmann::ordered_json::parse(in.substr(kPrefixBytes, header_bytes));
  } catch (const nlohmann::json::exception& e) {
    STRATA_FAIL("checkpoint '{}': malformed header: {}", file, e.what());
  }
  const size_t payload = static_cast<size_t>(align_up(static_cast<int64_t>(kPrefixBytes + header_bytes)));
  const size_t room = payload <= body ? body - payload : 0;  // payload bytes the file holds
  STRATA_CHECK(header.is_object() && header.contains("meta") && header.contains("tensors") &&
                   header["tensors"].is_array(),
               "checkpoint '{}': malformed header: expected an object with 'meta' and a 'tensors' array", file);
  Checkpoint ckpt;
  std::set<std::string> names;
  try {
    ckpt.meta = header.at("meta");
    for (size_t k = 0; k < header["tensors"].size(); ++k) {
      const nlohmann::ordered_json& e = header["tensors"][k];
      STRATA_CHECK(e.is_object(), "checkpoint '{}': tensor index entry {} is {}, expected an object", file, k,
                   e.type_name());
      for (const char* key : {"name", "dtype", "shape", "offset", "bytes"})
        STRATA_CHECK(e.contains(key), "checkpoint '{}': tensor index entry {} has no '{}'", file, k, key);
      STRATA_CHECK(e["name"].is_string() && e["dtype"].is_string(),
                   "checkpoint '{}': tensor index entry {} has name {} and dtype {}, expected two strings", file, k,
                   e["name"].dump(), e["dtype"].dump());
      const std::string name = e["name"].get<std::string>();
      STRATA_CHECK(names.insert(name).second, "checkpoint '{}': tensor '{}' appears twice in the index", file, name);
      const DType dtype = dtype_from_name(e["dtype"].get<std::string>(), file);
      const nlohmann::ordered_json& dims = e.at("shape");
      STRATA_CHECK(dims.is_array(), "checkpoint '{}': tensor '{}' has shape {}, expected an array of integers", file,
                   name, dims.dump());
      Shape shape;
      for (const auto& d : dims) shape.push_back(integer_entry(d, "a shape dimension", name, file));
      const int64_t offset = integer_entry(e.at("offset"), "offset", name, file);
      const int64_t bytes = integer_entry(e.at("bytes"), "bytes", name, file);
      // Checked before anything is allocated: the header decides the sizes.
      STRATA_CHECK(bytes == shape_bytes(shape, dtype),
                   "checkpoint '{}': tensor '{}' declares {} bytes, but a {} tensor of shape {} has {}", file, name,
                   bytes, dtype_name(dtype), shape_str(shape), shape_bytes_str(shape, dtype));
      STRATA_CHECK(offset >= 0 && static_cast<uint64_t>(offset) <= room &&
                       static_cast<uint64_t>(bytes) <= room - static_cast<uint64_t>(offset),
                   "checkpoint '{}': tensor '{}' ({} bytes at {}) does not fit the file", file, name, bytes, offset);
      Tensor t = Tensor::empty(shape, dtype);
      std::memcpy(t.raw_data(), in.data() + payload + offset, static_cast<size_t>(bytes));
      const size_t slash = name.find('/');
      STRATA_CHECK(slash != std::string::npos, "checkpoint '{}': tensor name '{}' has no section", file, name);
      const std::string section = name.substr(0, slash), rest = name.substr(slash + 1);
      if (section == "model")
        ckpt.model.emplace_back(rest, std::move(t));
      else if (section == "optimizer")
        ckpt.optimizer.emplace_back(rest, std::move(t));
      else
        STRATA_FAIL("checkpoint '{}': tensor '{}' in unknown section '{}'", file, name, section);
    }
  } catch (const nlohmann::json::exception& e) {
    STRATA_FAIL("checkpoint '{}': malformed header: {}", file, e.what());
  }
  return ckpt;
}

void check_parameters(const std::vector<std::pair<std::string, Tensor>>& model, const std::vector<Parameter>& params,
                      const std::string& source) {
  std::vector<bool> used(model.size(), false);
  for (const Parameter& p : params) {
    size_t k = 0;
    while (k < model.size() && model[k].first != p.name) ++k;
    if (k == model.size()) {
      std::string names;
      for (const auto& [n, t] : model) names += (names.empty() ? "" : ", ") + n;
      STRATA_FAIL("architecture mismatch: checkpoint '{}' has no parameter '{}' (shape {} in the model built from "
                  "the config); it holds: {}",
                  source, p.name, shape_str(p.var.shape()), names);
    }
    const Tensor& t = model[k].second;
    STRATA_CHECK(t.shape() == p.var.shape() && t.dtype() == DType::F32,
                 "architecture mismatch: parameter '{}' is {} {} in checkpoint '{}' but {} in the model built from "
                 "the config",
                 p.name, dtype_name(t.dtype()), shape_str(t.shape()), source, shape_str(p.var.shape()));
    const int64_t bad = ag::count_nonfinite(t);  // float32: checked above
    STRATA_CHECK(bad == 0,
                 "checkpoint '{}': parameter '{}' holds {} NaN or infinite values of {}; training never saves those, "
                 "so the file was damaged before it was sealed",
                 source, p.name, bad, t.numel());
    used[k] = true;
  }
  for (size_t k = 0; k < model.size(); ++k)
    STRATA_CHECK(used[k],
                 "architecture mismatch: checkpoint '{}' holds parameter '{}' {} that the model built from the config "
                 "does not have",
                 source, model[k].first, shape_str(model[k].second.shape()));
}

void load_parameters(const Checkpoint& ckpt, const std::vector<Parameter>& params, const std::string& source) {
  check_parameters(ckpt.model, params, source);
  for (const Parameter& p : params)
    for (const auto& [n, t] : ckpt.model)
      if (n == p.name) p.var.mutable_value().copy_from(t);
}

std::vector<std::pair<std::string, Tensor>> snapshot_parameters(const std::vector<Parameter>& params) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const Parameter& p : params) out.emplace_back(p.name, p.var.value().clone());
  return out;
}

void refresh_snapshot(std::vector<std::pair<std::string, Tensor>>& snap,
                      const std::vector<std::pair<std::string, Tensor>>& values) {
  bool same = snap.size() == values.size();
  for (size_t i = 0; same && i < values.size(); ++i)
    same = snap[i].first == values[i].first && snap[i].second.shape() == values[i].second.shape() &&
           snap[i].second.dtype() == values[i].second.dtype();
  if (!same) {
    snap.clear();
    for (const auto& [name, t] : values) snap.emplace_back(name, t.clone());
    return;
  }
  for (size_t i = 0; i < values.size(); ++i) snap[i].second.copy_from(values[i].second);
}

void refresh_snapshot(std::vector<std::pair<std::string, Tensor>>& snap, const std::vector<Parameter>& params) {
  std::vector<std::pair<std::string, Tensor>> values;
  for (const Parameter& p : params) values.emplace_back(p.name, p.var.value());
  refresh_snapshot(snap, values);
}

}  // namespace strata::nn
