// A run directory that appears whole or not at all.
//
// A run writes into a staging folder beside the final one (core/staged_directory:
// <run_dir>.partial-<pid>); every file in it is written atomically (core
// AtomicFile) except metrics.jsonl, which grows one line per epoch so `tail -f` can
// follow a run. commit() moves the staging folder into place, replacing an
// existing run dir only when overwrite is on, and only an earlier run dir (it holds
// metrics.jsonl) or an empty folder: never a user's file or other folder. If the
// run fails first, the staging folder is removed, so an error never leaves a
// half-written run dir behind.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/hash.h"
#include "core/staged_directory.h"

namespace strata::train {

namespace fs = std::filesystem;

class RunDirectory {
 public:
  // Throws a UserError when `final_dir` exists and overwrite is off (or it is not
  // an earlier run dir), or when the staging folder cannot be created.
  RunDirectory(fs::path final_dir, bool overwrite);
  // Continues in `leftover`, the staging folder of an interrupted run of the same
  // run dir (apps/training/resume_point.h), its metrics.jsonl cut back to its first
  // `metrics_bytes` bytes (the lines written before the resume point), which must
  // hash to `metrics_digest` (unchecked when empty). A refusal leaves the folder as
  // it was; a failure after adopting it keeps it (core/staged_directory.h).
  RunDirectory(fs::path final_dir, bool overwrite, const fs::path& leftover, uint64_t metrics_bytes,
               const std::string& metrics_digest);
  ~RunDirectory();
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

  const fs::path& final_path() const { return staged_->final_path(); }
  const fs::path& staging_path() const { return staged_->staging_path(); }
  // Writes `name` (relative; folders created) atomically inside the staging folder.
  void write(const std::string& name, std::string_view data);
  // Appends one line to metrics.jsonl.
  void append_metrics(const std::string& json_line);
  // metrics.jsonl's length so far (every line appended is flushed), and the XXH3 of
  // its bytes (hex).
  uint64_t metrics_bytes() const;
  std::string metrics_digest() const;
  // Moves the finished run into place.
  void commit();

 private:
  std::optional<StagedDirectory> staged_;
  bool overwrite_;
  std::FILE* metrics_ = nullptr;
  std::unique_ptr<Hasher> metrics_hash_ = std::make_unique<Hasher>();
};

}  // namespace strata::train
