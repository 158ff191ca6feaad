#include "datasets/dataset_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/file_util.h"

namespace strata::data {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'D', 'S'};
constexpr uint64_t kHeaderBytes = 64;
constexpr uint64_t kAlign = 64;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;
  uint64_t key_lo, key_hi;
  uint64_t payload_offset, payload_bytes;
  uint64_t sum_lo, sum_hi;
};
static_assert(sizeof(Header) == kHeaderBytes, "cache header must be 64 bytes");

// ---- writing ------------------------------------------------------------------

class Writer {
 public:
  std::string buf;
  void bytes(const void* p, size_t n) { buf.append(static_cast<const char*>(p), n); }
  template <class T>
  void pod(T v) {
    bytes(&v, sizeof v);
  }
  void u8(uint8_t v) { pod(v); }
  void i64(int64_t v) { pod(v); }
  void str(const std::string& s) {
    i64(static_cast<int64_t>(s.size()));
    bytes(s.data(), s.size());
  }
  void strs(const std::vector<std::string>& v) {
    i64(static_cast<int64_t>(v.size()));
    for (const auto& s : v) str(s);
  }
  void align() { buf.resize((buf.size() + kAlign - 1) / kAlign * kAlign, '\0'); }
  void tensor(const Tensor& t) {
    u8(t.defined());
    if (!t.defined()) return;
    STRATA_ASSERT(t.device().is_cpu(), "caching a {} tensor", t.device().str());
    u8(static_cast<uint8_t>(t.dtype()));
    u8(static_cast<uint8_t>(t.ndim()));
    for (int d = 0; d < t.ndim(); ++d) i64(t.dim(d));
    align();
    bytes(t.raw_data(), static_cast<size_t>(t.nbytes()));
  }
  void graph(const Graph& g) {
    u8(!g.empty());
    if (g.empty()) return;
    i64(g.num_rows());
    i64(g.num_cols());
    tensor(g.indptr());
    tensor(g.indices());
    tensor(g.values());
    tensor(g.has_edge_ids() ? g.edge_ids() : Tensor());
  }
  void features(const FeatureMatrix& f) {
    u8(!f.defined() ? 0 : f.is_sparse() ? 2 : 1);
    if (!f.defined()) return;
    i64(f.rows());
    i64(f.cols());
    if (f.is_sparse()) {
      tensor(f.indptr());
      tensor(f.indices());
      tensor(f.values());
    } else {
      tensor(f.dense_values());
    }
  }
};

void write_payload(Writer& w, const Dataset& ds) {
  w.str(ds.name);
  w.str(ds.format);
  w.str(ds.source);
  w.u8(static_cast<uint8_t>(ds.task));
  w.u8(ds.undirected);
  w.graph(ds.graph);
  w.u8(ds.hetero.has_value());
  if (ds.hetero) {
    const HeteroGraph& h = *ds.hetero;
    w.i64(h.num_node_types());
    for (const auto& t : h.node_types()) {
      w.str(t.name);
      w.i64(t.count);
    }
    // Inverse relations are rebuilt on load with add_inverse_relations(); that is
    // only exact when they are the tail, one per forward relation, in order.
    int64_t forward = 0, inverse = 0;
    for (const auto& r : h.relations()) {
      STRATA_ASSERT(!r.is_inverse || forward > 0, "inverse relation before any forward one");
      (r.is_inverse ? inverse : forward) += 1;
      STRATA_ASSERT(r.is_inverse || inverse == 0, "forward relation '{}' after inverse ones", r.name);
    }
    STRATA_ASSERT(inverse == 0 || inverse == forward, "{} inverse relations for {} forward ones", inverse, forward);
    w.i64(forward);
    w.u8(inverse > 0);
    for (const auto& r : h.relations()) {
      if (r.is_inverse) continue;
      w.str(r.src_type);
      w.str(r.name);
      w.str(r.dst_type);
      w.graph(r.adj);
    }
  }
  w.i64(ds.target_node_type);
  w.features(ds.features);
  w.i64(static_cast<int64_t>(ds.type_features.size()));
  for (const auto& f : ds.type_features) w.features(f);
  w.tensor(ds.edge_features);
  w.tensor(ds.labels);
  w.i64(ds.num_classes);
  w.strs(ds.class_names);
  w.tensor(ds.targets);
  w.tensor(ds.splits.train);
  w.tensor(ds.splits.val);
  w.tensor(ds.splits.test);
  w.str(ds.splits.origin);
  w.strs(ds.node_names);
  w.tensor(ds.original_ids);
  w.strs(ds.notes);
  w.str(ds.eval_metric);
}

// ---- reading ------------------------------------------------------------------

// Thrown for payloads that do not parse (caught, reported as Corrupt).
struct BadPayload {
  std::string what;
};

class Reader {
 public:
  Reader(std::shared_ptr<Storage> s, uint64_t begin, uint64_t end) : s_(std::move(s)), pos_(begin), end_(end) {}
  const char* base() const { return static_cast<const char*>(s_->data()); }
  void need(uint64_t n) const {
    if (n > end_ - pos_) throw BadPayload{fmt::format("payload ends early (need {} bytes at offset {})", n, pos_)};
  }
  template <class T>
  T pod() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, base() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  uint8_t u8() { return pod<uint8_t>(); }
  int64_t i64() { return pod<int64_t>(); }
  int64_t count(int64_t limit = int64_t{1} << 40) {
    const int64_t n = i64();
    if (n < 0 || n > limit) throw BadPayload{fmt::format("implausible count {}", n)};
    return n;
  }
  std::string str() {
    const int64_t n = count(int64_t{1} << 32);
    need(static_cast<uint64_t>(n));
    std::string s(base() + pos_, static_cast<size_t>(n));
    pos_ += static_cast<uint64_t>(n);
    return s;
  }
  std::vector<std::string> strs() {
    const int64_t n = count();
    std::vector<std::string> v;
    v.reserve(static_cast<size_t>(std::min<int64_t>(n, 1 << 20)));
    for (int64_t i = 0; i < n; ++i) v.push_back(str());
    return v;
  }
  void align() { pos_ = std::min(end_, (pos_ + kAlign - 1) / kAlign * kAlign); }
  Tensor tensor() {
    if (!u8()) return Tensor();
    const uint8_t dt = u8();
    if (dt > static_cast<uint8_t>(DType::I64)) throw BadPayload{fmt::format("unknown dtype code {}", dt)};
    const int nd = u8();
    if (nd > 8) throw BadPayload{fmt::format("tensor with {} dimensions", nd)};
    Shape shape;
    int64_t numel = 1;
    for (int d = 0; d < nd; ++d) {
      shape.push_back(count());
      numel *= shape.back();
      if (numel > (int64_t{1} << 40)) throw BadPayload{"implausible tensor size"};
    }
    align();
    const DType dtype = static_cast<DType>(dt);
    const uint64_t bytes = static_cast<uint64_t>(numel * dtype_size(dtype));
    need(bytes);
    Tensor t = Tensor::from_storage(s_, shape, dtype, static_cast<int64_t>(pos_));  // zero-copy view
    pos_ += bytes;
    return t;
  }
  Graph graph() {
    if (!u8()) return Graph();
    const int64_t rows = count(), cols = count();
    Tensor indptr = tensor(), indices = tensor(), values = tensor(), edge_ids = tensor();
    return Graph::from_csr(rows, cols, indptr, indices, values, edge_ids);
  }
  FeatureMatrix features() {
    const uint8_t kind = u8();
    if (kind == 0) return FeatureMatrix();
    const int64_t rows = count(), cols = count();
    if (kind == 1) {
      Tensor x = tensor();
      if (!x.defined() || x.ndim() != 2 || x.dim(0) != rows || x.dim(1) != cols)
        throw BadPayload{"dense features do not match their shape"};
      return FeatureMatrix::dense(x);
    }
    if (kind != 2) throw BadPayload{fmt::format("unknown feature kind {}", kind)};
    Tensor indptr = tensor(), indices = tensor(), values = tensor();
    return FeatureMatrix::sparse(rows, cols, indptr, indices, values);
  }
  bool at_end() const { return pos_ == end_; }

 private:
  std::shared_ptr<Storage> s_;
  uint64_t pos_, end_;
};

Dataset read_payload(Reader& r) {
  Dataset ds;
  ds.name = r.str();
  ds.format = r.str();
  ds.source = r.str();
  const uint8_t task = r.u8();
  if (task > static_cast<uint8_t>(Task::LinkPrediction)) throw BadPayload{fmt::format("unknown task code {}", task)};
  ds.task = static_cast<Task>(task);
  ds.undirected = r.u8() != 0;
  ds.graph = r.graph();
  if (r.u8()) {
    HeteroGraph h;
    const int64_t types = r.count(1 << 20);
    for (int64_t t = 0; t < types; ++t) {
      std::string name = r.str();
      h.add_node_type(name, r.count());
    }
    const int64_t forward = r.count(1 << 20);
    const bool inverses = r.u8() != 0;
    for (int64_t k = 0; k < forward; ++k) {
      std::string s = r.str(), name = r.str(), d = r.str();
      h.add_relation(s, name, d, r.graph());
    }
    if (inverses) h.add_inverse_relations();
    ds.hetero = std::move(h);
  }
  ds.target_node_type = static_cast<int>(r.i64());
  ds.features = r.features();
  const int64_t nt = r.count(1 << 20);
  for (int64_t t = 0; t < nt; ++t) ds.type_features.push_back(r.features());
  ds.edge_features = r.tensor();
  ds.labels = r.tensor();
  ds.num_classes = r.count();
  ds.class_names = r.strs();
  ds.targets = r.tensor();
  ds.splits.train = r.tensor();
  ds.splits.val = r.tensor();
  ds.splits.test = r.tensor();
  ds.splits.origin = r.str();
  ds.node_names = r.strs();
  ds.original_ids = r.tensor();
  ds.notes = r.strs();
  ds.eval_metric = r.str();
  if (!r.at_end()) throw BadPayload{"trailing bytes after the dataset"};
  return ds;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads exactly n bytes at offset; returns the count actually read (short at EOF).
uint64_t read_at(int fd, char* dst, uint64_t n, uint64_t offset, const fs::path& file) {
  uint64_t done = 0;
  while (done < n) {
    const ssize_t k = ::pread(fd, dst + done, static_cast<size_t>(std::min<uint64_t>(n - done, 1u << 30)),
                              static_cast<off_t>(offset + done));
    if (k < 0) {
      if (errno == EINTR) continue;
      STRATA_FAIL("error reading dataset cache '{}': {}", file.string(), std::strerror(errno));
    }
    if (k == 0) break;
    done += static_cast<uint64_t>(k);
  }
  return done;
}

}  // namespace

std::string_view cache_probe_name(CacheProbe p) {
  switch (p) {
    case CacheProbe::Hit: return "hit";
    case CacheProbe::Missing: return "missing";
    case CacheProbe::Stale: return "stale";
    case CacheProbe::Corrupt: return "corrupt";
    case CacheProbe::Truncated: return "truncated";
    case CacheProbe::Unreadable: return "unreadable";
  }
  return "missing";
}

int64_t write_dataset_cache(const fs::path& file, const Dataset& ds, const Hash128& key) {
  Writer w;
  write_payload(w, ds);
  const Hash128 sum = hash_bytes(w.buf.data(), w.buf.size());
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kDatasetCacheFormatVersion;
  h.header_bytes = kHeaderBytes;
  h.key_lo = key.lo;
  h.key_hi = key.hi;
  h.payload_offset = kHeaderBytes;
  h.payload_bytes = w.buf.size();
  h.sum_lo = sum.lo;
  h.sum_hi = sum.hi;
  AtomicFile out(file);
  out.write(&h, sizeof h);
  out.write(w.buf.data(), w.buf.size());
  out.commit();
  return static_cast<int64_t>(sizeof h + w.buf.size());
}

namespace {
CacheRead read_cache_file(const fs::path& file, const Hash128& key) {
  CacheRead out;
  Fd f;
  f.fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return out;  // Missing
    out.status = CacheProbe::Unreadable;
    out.reason = std::strerror(errno);
    return out;
  }
  struct stat st {};
  STRATA_CHECK(::fstat(f.fd, &st) == 0, "cannot stat dataset cache '{}': {}", file.string(), std::strerror(errno));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  out.file_bytes = static_cast<int64_t>(size);
  auto fail = [&](CacheProbe p, std::string why) {
    out.status = p;
    out.reason = std::move(why);
    return std::move(out);
  };
  if (size < kHeaderBytes) return fail(CacheProbe::Truncated, fmt::format("{} bytes, shorter than the header", size));
  Header h{};
  if (read_at(f.fd, reinterpret_cast<char*>(&h), kHeaderBytes, 0, file) != kHeaderBytes)
    return fail(CacheProbe::Truncated, "short header");
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.header_bytes != kHeaderBytes)
    return fail(CacheProbe::Corrupt, "not a Strata dataset cache (bad magic)");
  if (h.version != kDatasetCacheFormatVersion)
    return fail(CacheProbe::Stale, fmt::format("cache format version {}, this build writes {}", h.version,
                                               kDatasetCacheFormatVersion));
  if (h.key_lo != key.lo || h.key_hi != key.hi)
    return fail(CacheProbe::Stale, "the inputs or the loader changed since it was written");
  if (h.payload_offset != kHeaderBytes) return fail(CacheProbe::Corrupt, "bad payload offset");
  if (size < h.payload_offset + h.payload_bytes)
    return fail(CacheProbe::Truncated, fmt::format("{} bytes, the header promises {}", size,
                                                   h.payload_offset + h.payload_bytes));
  if (size > h.payload_offset + h.payload_bytes)
    return fail(CacheProbe::Corrupt, fmt::format("{} bytes, more than the {} the header promises", size,
                                                 h.payload_offset + h.payload_bytes));

  // One aligned buffer for the whole file: arrays become views into it.
  std::shared_ptr<Storage> storage = Storage::allocate(static_cast<int64_t>(size), Device::cpu());
  char* data = static_cast<char*>(storage->data());
  if (read_at(f.fd, data, size, 0, file) != size) return fail(CacheProbe::Truncated, "file shrank while reading");
  const Hash128 sum = hash_bytes(data + h.payload_offset, h.payload_bytes);
  if (sum.lo != h.sum_lo || sum.hi != h.sum_hi) return fail(CacheProbe::Corrupt, "payload checksum mismatch");
  try {
    Reader r(storage, h.payload_offset, h.payload_offset + h.payload_bytes);
    Dataset ds = read_payload(r);
    ds.validate();
    out.dataset = std::move(ds);
    out.status = CacheProbe::Hit;
  } catch (const BadPayload& e) {
    return fail(CacheProbe::Corrupt, e.what);
  } catch (const UserError& e) {
    return fail(CacheProbe::Corrupt, e.what());
  } catch (const InternalError& e) {
    return fail(CacheProbe::Corrupt, e.what());
  }
  return out;
}
}  // namespace

CacheRead read_dataset_cache(const fs::path& file, const Hash128& key) {
  try {
    return read_cache_file(file, key);
  } catch (const UserError& e) {  // I/O errors while reading
    CacheRead out;
    out.status = CacheProbe::Unreadable;
    out.reason = e.what();
    return out;
  }
}

}  // namespace strata::data
