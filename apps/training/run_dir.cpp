#include "apps/training/run_dir.h"

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/file_util.h"

namespace strata::train {

RunDirectory::RunDirectory(fs::path final_dir, bool overwrite) : overwrite_(overwrite) {
  std::error_code ec;
  STRATA_CHECK(overwrite || !fs::exists(final_dir, ec),
               "output.run_dir '{}' already exists (set output.overwrite: true to replace it, or choose another "
               "output.run_dir)",
               final_dir.string());
  staged_.emplace(std::move(final_dir), "metrics.jsonl", "output.run_dir");
  const fs::path metrics = staging_path() / "metrics.jsonl";
  metrics_ = std::fopen(metrics.c_str(), "w");
  STRATA_CHECK(metrics_ != nullptr, "cannot create '{}': {}", metrics.string(), std::strerror(errno));
}

RunDirectory::RunDirectory(fs::path final_dir, bool overwrite, const fs::path& leftover, uint64_t metrics_bytes,
                           const std::string& metrics_digest)
    : overwrite_(overwrite) {
  std::error_code ec;
  STRATA_CHECK(overwrite || !fs::exists(final_dir, ec),
               "output.run_dir '{}' already exists (set output.overwrite: true to replace it with the resumed run, or "
               "move it away)",
               final_dir.string());
  // Checked before the folder is adopted: a refusal leaves it as it was.
  const fs::path before = leftover / "metrics.jsonl";
  std::string kept = read_file(before);
  STRATA_CHECK(kept.size() >= metrics_bytes,
               "cannot resume '{}': metrics.jsonl holds {} bytes, fewer than the {} its resume point recorded (the "
               "folder was changed after the run stopped)",
               leftover.string(), kept.size(), metrics_bytes);
  kept.resize(metrics_bytes);  // drops the epochs after the resume point
  metrics_hash_->add(kept.data(), kept.size());
  STRATA_CHECK(metrics_digest.empty() || this->metrics_digest() == metrics_digest,
               "cannot resume '{}': the first {} bytes of metrics.jsonl are not those its resume point recorded (the "
               "folder was changed after the run stopped)",
               leftover.string(), metrics_bytes);
  staged_.emplace(std::move(final_dir), "metrics.jsonl", "output.run_dir", leftover);
  const fs::path metrics = staging_path() / "metrics.jsonl";
  fs::resize_file(metrics, metrics_bytes, ec);
  STRATA_CHECK(!ec, "cannot cut '{}' back to the resume point: {}", metrics.string(), ec.message());
  metrics_ = std::fopen(metrics.c_str(), "a");
  STRATA_CHECK(metrics_ != nullptr && std::fseek(metrics_, 0, SEEK_END) == 0, "cannot append to '{}': {}",
               metrics.string(), std::strerror(errno));
}

std::string RunDirectory::metrics_digest() const { return metrics_hash_->digest().hex(); }

uint64_t RunDirectory::metrics_bytes() const {
  STRATA_ASSERT(metrics_ != nullptr, "metrics.jsonl is closed");
  const long at = std::ftell(metrics_);
  STRATA_ASSERT(at >= 0, "cannot tell the length of metrics.jsonl");
  return static_cast<uint64_t>(at);
}

RunDirectory::~RunDirectory() {
  if (metrics_) std::fclose(metrics_);
}

void RunDirectory::write(const std::string& name, std::string_view data) {
  const fs::path path = staging_path() / name;
  ensure_directory(path.parent_path());
  write_file_atomic(path, data);
}

void RunDirectory::append_metrics(const std::string& json_line) {
  STRATA_ASSERT(metrics_ != nullptr, "metrics.jsonl is closed");
  std::fputs(json_line.c_str(), metrics_);
  std::fputc('\n', metrics_);
  metrics_hash_->add(json_line.data(), json_line.size()).add("\n", 1);  // the raw bytes, as a resume re-reads them
  std::fflush(metrics_);
}

void RunDirectory::commit() {
  STRATA_ASSERT(metrics_ != nullptr, "run directory committed twice");
  STRATA_CHECK(std::fclose(metrics_) == 0, "cannot write '{}': {}", (staging_path() / "metrics.jsonl").string(),
               std::strerror(errno));
  metrics_ = nullptr;
  std::error_code ec;
  STRATA_CHECK(overwrite_ || !fs::exists(final_path(), ec),
               "output.run_dir '{}' appeared while the run was going (output.overwrite is false)",
               final_path().string());
  staged_->commit();
}

}  // namespace strata::train
