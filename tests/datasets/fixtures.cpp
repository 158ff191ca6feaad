#include "tests/datasets/fixtures.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cstring>
#include <fstream>

#include "core/file_util.h"

namespace strata::testing {

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = fs::temp_directory_path() / fmt::format("strata-datasets-test-{}-{}", ::getpid(), counter++);
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

fs::path TempDir::write(const std::string& name, const std::string& text) const {
  const fs::path p = path_ / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

std::string gzip_bytes(const std::string& text) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, text.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

fs::path TempDir::write_gz(const std::string& name, const std::string& text) const {
  return write(name, gzip_bytes(text));
}

void write_archive(const fs::path& file, const std::string& format,
                   const std::vector<std::pair<std::string, std::string>>& members) {
  archive* a = archive_write_new();
  if (format == "zip") {
    archive_write_set_format_zip(a);
  } else {
    archive_write_set_format_pax_restricted(a);
    archive_write_add_filter_gzip(a);
  }
  ASSERT_EQ(archive_write_open_filename(a, file.c_str()), ARCHIVE_OK) << archive_error_string(a);
  for (const auto& [name, text] : members) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_size(e, static_cast<la_int64_t>(text.size()));
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    ASSERT_EQ(archive_write_header(a, e), ARCHIVE_OK) << archive_error_string(a);
    ASSERT_EQ(archive_write_data(a, text.data(), text.size()), static_cast<la_ssize_t>(text.size()));
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
}

void truncate_file(const fs::path& file, uintmax_t bytes) { fs::resize_file(file, bytes); }

void corrupt_byte(const fs::path& file, uintmax_t offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

void expect_same_tensor(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.defined(), b.defined()) << what;
  if (!a.defined()) return;
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.shape(), b.shape()) << what;
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.nbytes())), 0) << what << " differs";
}

void expect_same_graph(const Graph& a, const Graph& b, const std::string& what) {
  ASSERT_EQ(a.empty(), b.empty()) << what;
  if (a.empty()) return;
  EXPECT_TRUE(a.same_structure(b)) << what << ": " << a.describe() << " vs " << b.describe();
  expect_same_tensor(a.values(), b.values(), what + " values");
  expect_same_tensor(a.edge_ids(), b.edge_ids(), what + " edge ids");
}

void expect_same_features(const data::FeatureMatrix& a, const data::FeatureMatrix& b, const std::string& what) {
  ASSERT_EQ(a.defined(), b.defined()) << what;
  if (!a.defined()) return;
  EXPECT_EQ(a.is_sparse(), b.is_sparse()) << what;
  expect_same_tensor(a.to_dense(), b.to_dense(), what);
}

void expect_same_dataset(const data::Dataset& a, const data::Dataset& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.task, b.task);
  EXPECT_EQ(a.undirected, b.undirected);
  expect_same_graph(a.graph, b.graph, "graph");
  ASSERT_EQ(a.hetero.has_value(), b.hetero.has_value());
  if (a.hetero) {
    ASSERT_EQ(a.hetero->num_node_types(), b.hetero->num_node_types());
    for (int t = 0; t < a.hetero->num_node_types(); ++t) {
      EXPECT_EQ(a.hetero->node_types()[t].name, b.hetero->node_types()[t].name);
      EXPECT_EQ(a.hetero->node_types()[t].count, b.hetero->node_types()[t].count);
    }
    ASSERT_EQ(a.hetero->num_relations(), b.hetero->num_relations());
    for (int r = 0; r < a.hetero->num_relations(); ++r) {
      const auto &x = a.hetero->relation(r), &y = b.hetero->relation(r);
      EXPECT_EQ(x.str(), y.str());
      EXPECT_EQ(x.is_inverse, y.is_inverse);
      expect_same_graph(x.adj, y.adj, "relation " + x.str());
    }
  }
  EXPECT_EQ(a.target_node_type, b.target_node_type);
  expect_same_features(a.features, b.features, "features");
  ASSERT_EQ(a.type_features.size(), b.type_features.size());
  for (size_t t = 0; t < a.type_features.size(); ++t)
    expect_same_features(a.type_features[t], b.type_features[t], "type features " + std::to_string(t));
  expect_same_tensor(a.edge_features, b.edge_features, "edge features");
  expect_same_tensor(a.labels, b.labels, "labels");
  EXPECT_EQ(a.num_classes, b.num_classes);
  EXPECT_EQ(a.class_names, b.class_names);
  expect_same_tensor(a.targets, b.targets, "targets");
  expect_same_tensor(a.splits.train, b.splits.train, "train");
  expect_same_tensor(a.splits.val, b.splits.val, "val");
  expect_same_tensor(a.splits.test, b.splits.test, "test");
  EXPECT_EQ(a.splits.origin, b.splits.origin);
  EXPECT_EQ(a.node_names, b.node_names);
  expect_same_tensor(a.original_ids, b.original_ids, "original ids");
  EXPECT_EQ(a.notes, b.notes);
  EXPECT_EQ(a.eval_metric, b.eval_metric);
}

std::vector<std::pair<int64_t, int64_t>> edge_pairs(const Graph& g) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t r = 0; r < g.num_rows(); ++r)
    for (int64_t p = g.row_begin(r); p < g.row_end(r); ++p) out.emplace_back(r, g.column(p));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace strata::testing
