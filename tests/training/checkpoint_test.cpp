// Checkpoint files: exact round trip, and every way a file can be wrong.
#include <gtest/gtest.h>

#include <filesystem>

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
