// Checkpoint files: exact round trip, and every way a file can be wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>

#include "apps/training/run_checkpoint.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "models/checkpoint.h"
#include "models/gnn.h"
#include "models/optimizer.h"
#include "tests/support/test_support.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

class CheckpointFixture : public testing::TempDirTest {
 protected:
  CheckpointFixture() : TempDirTest("ckpt-test") {}

  nn::Checkpoint sample(int64_t hidden = 16) {
    Rng rng(3);
    nn::ModelConfig c;
    c.hidden = hidden;
    model_ = std::make_unique<nn::GnnModel>(c, 10, 4, rng);
    auto opt = nn::make_optimizer({}, model_->parameters());
    for (const auto& p : model_->parameters()) p.var.set_grad(Tensor::full(p.var.shape(), DType::F32, 0.5));
    opt->step();
    nn::Checkpoint ck;
    ck.meta["model"] = "graphsage";
    ck.meta["epoch"] = 17;
    ck.model = nn::snapshot_parameters(model_->parameters());
    ck.optimizer = opt->state();
    return ck;
  }

  std::unique_ptr<nn::GnnModel> model_;
};

class CheckpointTest : public CheckpointFixture {};
class CheckpointErrorTest : public CheckpointFixture {};

// A best-epoch snapshot taken again overwrites its own tensors (no new memory) with
// the current values, and stays apart from the parameters; a different set of
// parameters (another shape) gets fresh copies.
TEST_F(CheckpointTest, RefreshedSnapshotsReuseTheirTensorsAndCopyTheValues) {
  sample();
  const auto params = model_->parameters();
  std::vector<std::pair<std::string, Tensor>> snap;
  nn::refresh_snapshot(snap, params);
  ASSERT_EQ(snap.size(), params.size());
  const float* storage = snap[0].second.data<float>();
  EXPECT_NE(storage, params[0].var.value().data<float>());
  params[0].var.mutable_value().data<float>()[0] = 42.0f;
  EXPECT_NE(snap[0].second.data<float>()[0], 42.0f);
  nn::refresh_snapshot(snap, params);
  EXPECT_EQ(snap[0].second.data<float>(), storage);
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(snap[i].first, params[i].name);
    const CloseReport rep = all_close(snap[i].second, params[i].var.value(), 0, 0);
    EXPECT_TRUE(rep.ok) << params[i].name << ": " << rep.str();
  }
  std::vector<std::pair<std::string, Tensor>> other = {{params[0].name, Tensor::zeros({3}, DType::F32)}};
  nn::refresh_snapshot(snap, other);
  ASSERT_EQ(snap.size(), 1u);
  EXPECT_EQ(snap[0].second.shape(), Shape({3}));
  EXPECT_NE(snap[0].second.data<float>(), other[0].second.data<float>());
}

TEST_F(CheckpointTest, RoundTripIsExact) {
  const nn::Checkpoint ck = sample();
  const fs::path path = dir_ / "a.ckpt";
  nn::write_checkpoint(path, ck);
  const nn::Checkpoint back = nn::read_checkpoint(path);
  EXPECT_EQ(back.meta, ck.meta);
  ASSERT_EQ(back.model.size(), ck.model.size());
  for (size_t i = 0; i < ck.model.size(); ++i) {
    EXPECT_EQ(back.model[i].first, ck.model[i].first);
    EXPECT_EQ(back.model[i].second.shape(), ck.model[i].second.shape());
    EXPECT_EQ(std::memcmp(back.model[i].second.raw_data(), ck.model[i].second.raw_data(), ck.model[i].second.nbytes()), 0);
  }
  ASSERT_EQ(back.optimizer.size(), ck.optimizer.size());
  EXPECT_EQ(back.optimizer[0].first, "step");
  EXPECT_EQ(back.optimizer[0].second.data<int64_t>()[0], 1);
  // Loading into a freshly built model reproduces the values.
  Rng other(99);
  nn::GnnModel fresh(model_->config(), 10, 4, other);
  nn::load_parameters(back, fresh.parameters(), path.string());
  for (size_t i = 0; i < fresh.parameters().size(); ++i)
    EXPECT_EQ(max_abs_diff(fresh.parameters()[i].var.value(), model_->parameters()[i].var.value()), 0.0);
  // Nothing but the file itself is left in the directory (the write is atomic).
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(CheckpointErrorTest, CorruptTruncatedAndForeignFiles) {
  const fs::path path = dir_ / "a.ckpt";
  nn::write_checkpoint(path, sample());
  std::string bytes = read_file(path);
  // One flipped bit in the payload.
  std::string corrupt = bytes;
  corrupt[bytes.size() / 2] ^= 0x10;
  write_file_atomic(dir_ / "corrupt.ckpt", corrupt);
  testing::expect_user_error([&] { nn::read_checkpoint(dir_ / "corrupt.ckpt"); },
                             {"corrupt.ckpt", "checksum mismatch", "corrupt or truncated"});
  write_file_atomic(dir_ / "short.ckpt", bytes.substr(0, bytes.size() - 100));
  testing::expect_user_error([&] { nn::read_checkpoint(dir_ / "short.ckpt"); }, {"short.ckpt", "checksum mismatch"});
  write_file_atomic(dir_ / "tiny.ckpt", bytes.substr(0, 12));
  testing::expect_user_error([&] { nn::read_checkpoint(dir_ / "tiny.ckpt"); }, {"tiny.ckpt", "truncated"});
  write_file_atomic(dir_ / "config.yaml", "version: 1\n");
  testing::expect_user_error([&] { nn::read_checkpoint(dir_ / "config.yaml"); },
                             {"config.yaml", "is not a Strata checkpoint"});
  testing::expect_user_error([&] { nn::read_checkpoint(dir_ / "missing.ckpt"); }, {"missing.ckpt", "does not exist"});
  // A newer format version (with a valid checksum).
  std::string newer = bytes.substr(0, bytes.size() - 16);
  newer[8] = 2;
  const Hash128 h = hash_bytes(newer.data(), newer.size());
  newer.append(reinterpret_cast<const char*>(&h.lo), 8).append(reinterpret_cast<const char*>(&h.hi), 8);
  write_file_atomic(dir_ / "newer.ckpt", newer);
  testing::expect_user_error([&] { nn::read_checkpoint(dir_ / "newer.ckpt"); },
                             {"newer.ckpt", "format version 2", "newer than this Strata reads (1)"});
}

// A checkpoint whose header is replaced, re-sealed with a valid checksum: what a
// damaged writer or a hand-edited file gives, past the checksum to the header checks.
std::string resealed(const std::string& bytes, const nlohmann::ordered_json& header, uint32_t version = 1) {
  uint64_t old_length;
  std::memcpy(&old_length, bytes.data() + 16, 8);
  const size_t old_payload = (24 + old_length + 63) / 64 * 64;
  const std::string text = header.dump();
  std::string out = bytes.substr(0, 8);
  const uint32_t reserved = 0;
  const uint64_t length = text.size();
  out.append(reinterpret_cast<const char*>(&version), 4).append(reinterpret_cast<const char*>(&reserved), 4);
  out.append(reinterpret_cast<const char*>(&length), 8).append(text);
  out.resize((out.size() + 63) / 64 * 64, '\0');
  out += bytes.substr(old_payload, bytes.size() - 16 - old_payload);
  const Hash128 h = hash_bytes(out.data(), out.size());
  return out.append(reinterpret_cast<const char*>(&h.lo), 8).append(reinterpret_cast<const char*>(&h.hi), 8);
}

nlohmann::ordered_json header_of(const std::string& bytes) {
  uint64_t length;
  std::memcpy(&length, bytes.data() + 16, 8);
  return nlohmann::ordered_json::parse(bytes.substr(24, length));
}

// Found by fuzzing re-sealed checkpoints (tests/apps/checkpoint_fuzz_test.py): the index's
// sizes were trusted before they were checked (a negative or huge shape was allocated
// first), and entries of the wrong type or repeated names got through or named no file.
TEST_F(CheckpointErrorTest, ResealedHeadersWithBadIndexEntriesAreRefusedBeforeAllocating) {
  const fs::path path = dir_ / "a.ckpt";
  nn::write_checkpoint(path, sample());
  const std::string bytes = read_file(path);
  const nlohmann::ordered_json good = header_of(bytes);
  write_file_atomic(dir_ / "same.ckpt", resealed(bytes, good));
  EXPECT_EQ(nn::read_checkpoint(dir_ / "same.ckpt").model.size(), sample().model.size()) << "the re-sealer is exact";
  auto expect_refused = [&](const std::function<void(nlohmann::ordered_json&)>& edit,
                            std::initializer_list<std::string> parts, uint32_t version = 1) {
    nlohmann::ordered_json h = good;
    edit(h);
    const fs::path bad = dir_ / "bad.ckpt";
    write_file_atomic(bad, resealed(bytes, h, version));
    testing::expect_user_error([&] { nn::read_checkpoint(bad); }, parts);
    testing::expect_user_error([&] { nn::read_checkpoint(bad); }, {"checkpoint '" + bad.string() + "'"});
  };
  using J = nlohmann::ordered_json;
  expect_refused([](J& h) { h["tensors"][0]["shape"] = {-1, 4}; }, {"declares", "has no valid size"});
  expect_refused([](J& h) { h["tensors"][0]["shape"] = {int64_t{1} << 40, int64_t{1} << 40}; },
                 {"tensor 'model/layers.0.weight_self'", "has no valid size"});
  expect_refused([](J& h) { h["tensors"][1]["offset"] = 1.5; }, {"has offset 1.5, expected an integer"});
  expect_refused([](J& h) { h["tensors"][1]["offset"] = int64_t{1} << 40; }, {"does not fit the file"});
  expect_refused([](J& h) { h["tensors"][1]["bytes"] = uint64_t{1} << 63; }, {"has bytes 9223372036854775808"});
  expect_refused([](J& h) { h["tensors"][2]["shape"][0] = "16"; }, {"shape dimension \"16\", expected an integer"});
  expect_refused([](J& h) { h["tensors"].push_back(h["tensors"][0]); },
                 {"tensor 'model/layers.0.weight_self' appears twice in the index"});
  expect_refused([](J& h) { h["tensors"][3] = 7; }, {"tensor index entry 3 is number, expected an object"});
  expect_refused([](J& h) { h["tensors"][3].erase("dtype"); }, {"tensor index entry 3 has no 'dtype'"});
  expect_refused([](J& h) { h["tensors"] = J::object(); }, {"malformed header", "a 'tensors' array"});
  expect_refused([](J&) {}, {"format version 0; versions start at 1"}, 0);
}

// eval, infer and --resume read header fields with typed lookups; a field of another type
// (a hand-edited file, another writer) was an "unexpected error" with exit 3.
TEST_F(CheckpointErrorTest, TrainingCheckpointFieldsOfAnotherTypeAreRefusedNamingTheField) {
  const fs::path path = dir_ / "t.ckpt";
  auto write_meta = [&](const nlohmann::ordered_json& meta) {
    nn::Checkpoint ck = sample();
    ck.meta = meta;
    nn::write_checkpoint(path, ck);
  };
  write_meta({{"model", "graphsage"}, {"run", 2}, {"dataset", {{"nodes", 10}, {"multilabel", false}}},
              {"test_acc", nullptr}, {"seed", uint64_t{1} << 63}});
  const nn::Checkpoint ok = train::read_training_checkpoint(path);
  EXPECT_TRUE(std::isnan(ok.meta["test_acc"].get<double>())) << "a NaN metric is written as null, read back as NaN";
  EXPECT_EQ(ok.meta.value("run", 0), 2);
  write_meta({{"run", "2"}});
  testing::expect_user_error([&] { train::read_training_checkpoint(path); },
                             {"checkpoint '" + path.string() + "'", "header field 'run' is \"2\"",
                              "expected a run number (1 or more)"});
  write_meta({{"run", 0}});
  testing::expect_user_error([&] { train::read_training_checkpoint(path); }, {"header field 'run' is 0"});
  write_meta({{"dataset", {{"nodes", -5}}}});
  testing::expect_user_error([&] { train::read_training_checkpoint(path); },
                             {"header field 'dataset.nodes' is -5, expected an integer >= 0"});
  write_meta({{"graph", {{"relations", {"a", 3}}}}});
  testing::expect_user_error([&] { train::read_training_checkpoint(path); },
                             {"'graph.relations' is [\"a\",3], expected an array of strings"});
  write_meta({{"policy", nullptr}});
  testing::expect_user_error([&] { train::read_training_checkpoint(path); }, {"'policy' is null, expected a string"});
  write_meta(5);
  testing::expect_user_error([&] { train::read_training_checkpoint(path); },
                             {"its header's meta is number, expected an object"});
}

// Training stops on a non-finite loss before it saves, so NaN or infinite state in a
// checkpoint is damage (past the checksum): refused, not evaluated into NaN predictions.
TEST_F(CheckpointErrorTest, NonFiniteParametersAndOptimizerStateAreRefused) {
  nn::Checkpoint ck = sample();
  ck.model[1].second.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  Rng rng(5);
  nn::GnnModel fresh(model_->config(), 10, 4, rng);
  testing::expect_user_error([&] { nn::load_parameters(ck, fresh.parameters(), "nan.ckpt"); },
                             {"checkpoint 'nan.ckpt': parameter '" + ck.model[1].first + "'",
                              "holds 1 NaN or infinite values of"});
  nn::Checkpoint good = sample();
  // check_parameters checks as load_parameters does, and copies nothing.
  const Tensor before = fresh.parameters()[0].var.value().clone();
  nn::check_parameters(good.model, fresh.parameters(), "good.ckpt");
  EXPECT_EQ(max_abs_diff(fresh.parameters()[0].var.value(), before), 0.0);
  testing::expect_user_error([&] { nn::check_parameters(ck.model, fresh.parameters(), "nan.ckpt"); },
                             {"holds 1 NaN or infinite values"});
  auto opt = nn::make_optimizer({}, fresh.parameters());
  good.optimizer[1].second.data<float>()[0] = -std::numeric_limits<float>::infinity();
  testing::expect_user_error([&] { opt->load_state(good.optimizer, "inf.ckpt"); },
                             {"optimizer state '" + good.optimizer[1].first + "' in 'inf.ckpt'",
                              "holds 1 NaN or infinite values"});
}

TEST_F(CheckpointErrorTest, ArchitectureMismatchNamesParameterAndShapes) {
  const fs::path path = dir_ / "h16.ckpt";
  nn::write_checkpoint(path, sample(16));
  const nn::Checkpoint ck = nn::read_checkpoint(path);
  Rng rng(1);
  nn::ModelConfig wider;
  wider.hidden = 32;
  nn::GnnModel m32(wider, 10, 4, rng);
  testing::expect_user_error([&] { nn::load_parameters(ck, m32.parameters(), path.string()); },
                             {"architecture mismatch", "parameter 'layers.0.weight_self'", "[10, 16]", "h16.ckpt",
                              "but [10, 32] in the model built from the config"});
  nn::ModelConfig gcn;
  gcn.kind = nn::ModelKind::Gcn;
  nn::GnnModel g(gcn, 10, 4, rng);
  testing::expect_user_error([&] { nn::load_parameters(ck, g.parameters(), path.string()); },
                             {"architecture mismatch", "has no parameter 'layers.0.weight'",
                              "it holds: layers.0.weight_self, layers.0.weight_neigh"});
  nn::ModelConfig no_root;
  no_root.root_weight = false;
  nn::GnnModel nr(no_root, 10, 4, rng);
  testing::expect_user_error([&] { nn::load_parameters(ck, nr.parameters(), path.string()); },
                             {"architecture mismatch", "holds parameter 'layers.0.weight_self' [10, 16]",
                              "does not have"});
}

}  // namespace
}  // namespace strata
