#include "apps/training/run_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/file_util.h"

namespace strata::train {

namespace {

// What overwrite may replace: an earlier run dir (every committed one holds
// metrics.jsonl) or an empty folder, never a user's file or other folder.
void check_replaceable(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir, ec))) return;
  STRATA_CHECK(fs::is_directory(fs::symlink_status(dir, ec)),
               "output.run_dir '{}' exists and is not a folder; a run replaces only an earlier run dir (choose "
               "another output.run_dir, or move the file away)",
               dir.string());
  const bool empty = fs::is_empty(dir, ec);
  STRATA_CHECK(empty || fs::is_regular_file(dir / "metrics.jsonl", ec),
               "output.run_dir '{}' is a folder that holds no earlier run (no metrics.jsonl); a run replaces only "
               "an earlier run dir or an empty folder (choose another output.run_dir)",
               dir.string());
}

}  // namespace

RunDirectory::RunDirectory(fs::path final_dir, bool overwrite) : final_(std::move(final_dir)), overwrite_(overwrite) {
  STRATA_CHECK(!final_.filename().empty() && final_.filename() != "." && final_.filename() != "..",
               "output.run_dir '{}' names no folder", final_.string());
  std::error_code ec;
  STRATA_CHECK(overwrite || !fs::exists(final_, ec),
               "output.run_dir '{}' already exists (set output.overwrite: true to replace it, or choose another "
               "output.run_dir)",
               final_.string());
  check_replaceable(final_);
  staging_ = final_;
  staging_ += fmt::format(".partial-{}", ::getpid());
  fs::remove_all(staging_, ec);
  fs::create_directories(staging_, ec);
  STRATA_CHECK(!ec && fs::is_directory(staging_), "cannot create output.run_dir '{}' (staging folder '{}'): {}",
               final_.string(), staging_.string(), ec ? ec.message() : "a file of that name exists");
  const fs::path metrics = staging_ / "metrics.jsonl";
  metrics_ = std::fopen(metrics.c_str(), "w");
  STRATA_CHECK(metrics_ != nullptr, "cannot create '{}': {}", metrics.string(), std::strerror(errno));
}

RunDirectory::~RunDirectory() {
  if (metrics_) std::fclose(metrics_);
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
  }
}

void RunDirectory::write(const std::string& name, std::string_view data) {
  const fs::path path = staging_ / name;
  ensure_directory(path.parent_path());
  write_file_atomic(path, data);
}

void RunDirectory::append_metrics(const std::string& json_line) {
  STRATA_ASSERT(metrics_ != nullptr, "metrics.jsonl is closed");
  std::fputs(json_line.c_str(), metrics_);
  std::fputc('\n', metrics_);
  std::fflush(metrics_);
}

void RunDirectory::commit() {
  STRATA_ASSERT(!committed_, "run directory committed twice");
  STRATA_CHECK(std::fclose(metrics_) == 0, "cannot write '{}': {}", (staging_ / "metrics.jsonl").string(),
               std::strerror(errno));
  metrics_ = nullptr;
  std::error_code ec;
  fs::path old;
  if (fs::exists(final_, ec)) {
    STRATA_CHECK(overwrite_, "output.run_dir '{}' appeared while the run was going (output.overwrite is false)",
                 final_.string());
    check_replaceable(final_);
    old = final_;
    old += fmt::format(".old-{}", ::getpid());
    fs::remove_all(old, ec);
    fs::rename(final_, old, ec);
    STRATA_CHECK(!ec, "cannot move the previous run dir '{}' aside: {}", final_.string(), ec.message());
  }
  fs::rename(staging_, final_, ec);
  if (ec) {
    if (!old.empty()) fs::rename(old, final_);
    STRATA_FAIL("cannot move the finished run from '{}' to '{}': {}", staging_.string(), final_.string(), ec.message());
  }
  committed_ = true;
  if (!old.empty()) fs::remove_all(old, ec);
}

}  // namespace strata::train
