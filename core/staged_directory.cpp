#include "core/staged_directory.h"

#include <fmt/format.h>
#include <unistd.h>

#include "core/error.h"
#include "core/file_util.h"

namespace strata {

StagedDirectory::StagedDirectory(fs::path final_dir, std::string marker, std::string setting)
    : final_(std::move(final_dir)), marker_(std::move(marker)), setting_(std::move(setting)) {
  STRATA_CHECK(!final_.filename().empty() && final_.filename() != "." && final_.filename() != "..",
               "{} '{}' names no folder", setting_, final_.string());
  check_replaceable();
  staging_ = final_;
  staging_ += fmt::format(".partial-{}", ::getpid());
  std::error_code ec;
  fs::remove_all(staging_, ec);
  const std::string why = create_directories_problem(staging_);
  STRATA_CHECK(why.empty(), "cannot create {} '{}' (staging folder '{}'): {}", setting_, final_.string(),
               staging_.string(), why);
}

StagedDirectory::~StagedDirectory() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
  }
}

void StagedDirectory::check_replaceable() const {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(final_, ec);
  if (!fs::exists(st)) return;
  STRATA_CHECK(fs::is_directory(st),
               "{} '{}' exists and is not a folder; only an earlier output is replaced (choose "
               "another {}, or move the file away)",
               setting_, final_.string(), setting_);
  STRATA_CHECK(fs::is_empty(final_, ec) || fs::is_regular_file(final_ / marker_, ec),
               "{} '{}' is a folder that holds no earlier output (no {}); only an earlier output or an empty folder "
               "is replaced (choose another {})",
               setting_, final_.string(), marker_, setting_);
}

void StagedDirectory::commit() {
  STRATA_ASSERT(!committed_, "{} committed twice", final_.string());
  std::error_code ec;
  fs::path old;
  if (fs::exists(fs::symlink_status(final_, ec))) {
    check_replaceable();  // it may have appeared, or changed, while the work went on
    old = final_;
    old += fmt::format(".old-{}", ::getpid());
    fs::remove_all(old, ec);
    fs::rename(final_, old, ec);
    STRATA_CHECK(!ec, "cannot move the earlier {} '{}' aside: {}", setting_, final_.string(), ec.message());
  }
  fs::rename(staging_, final_, ec);
  if (ec) {
    if (!old.empty()) fs::rename(old, final_);
    STRATA_FAIL("cannot move the finished output from '{}' to {} '{}': {}", staging_.string(), setting_,
                final_.string(), ec.message());
  }
  committed_ = true;
  if (!old.empty()) fs::remove_all(old, ec);
}

}  // namespace strata
