#include "core/staged_directory.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/error.h"
#include "core/file_util.h"

namespace strata {

namespace {

// The pid in a sibling's name <final><infix><pid> or <final><infix><pid>.<n>, or -1 when the
// name is not of that form. The ".<n>" form is taken when a folder with the plain name exists:
// an earlier process with the same pid (pids repeat across restarts of a container) left it,
// and it is never removed to make room.
int64_t sibling_pid(const std::string& name, const std::string& prefix) {
  if (!name.starts_with(prefix)) return -1;
  std::string digits = name.substr(prefix.size());
  const size_t dot = digits.find('.');
  if (dot != std::string::npos) {
    const std::string n = digits.substr(dot + 1);
    if (n.empty() || n.size() > 9 || !std::all_of(n.begin(), n.end(), ::isdigit)) return -1;
    digits.resize(dot);
  }
  if (digits.empty() || digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return -1;
  return std::stoll(digits);
}

std::string staging_infix() { return ".partial-"; }

// The pid a staging folder beside `final_dir` is named with (-1: not a staging folder's name).
int64_t staging_pid(const fs::path& final_dir, const fs::path& folder) {
  return sibling_pid(folder.filename().string(), final_dir.filename().string() + staging_infix());
}

// <final>.partial-<pid>, or <final>.partial-<pid>.<n> with the smallest n that is free.
fs::path free_staging_name(const fs::path& final_dir) {
  fs::path name = final_dir;
  name += fmt::format("{}{}", staging_infix(), ::getpid());
  std::error_code ec;
  for (int n = 1; fs::exists(fs::symlink_status(name, ec)); ++n) {
    name = final_dir;
    name += fmt::format("{}{}.{}", staging_infix(), ::getpid(), n);
  }
  return name;
}

// Folders <final><infix><pid> beside `final_dir`, with whether their process runs.
std::vector<StagedDirectory::Leftover> siblings(const fs::path& final_dir, const std::string& infix) {
  std::vector<StagedDirectory::Leftover> found;
  const fs::path parent = final_dir.has_parent_path() ? final_dir.parent_path() : fs::path(".");
  const std::string prefix = final_dir.filename().string() + infix;
  std::error_code ec;
  fs::directory_iterator it(parent, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const int64_t pid = sibling_pid(it->path().filename().string(), prefix);
    if (pid < 0 || !it->is_directory(ec)) continue;
    StagedDirectory::Leftover l;
    l.path = it->path();
    l.pid = pid;
    // Signal 0 checks that the process exists; EPERM means it does, under another user.
    l.running = l.pid != ::getpid() && (::kill(static_cast<pid_t>(l.pid), 0) == 0 || errno == EPERM);
    found.push_back(l);
  }
  std::sort(found.begin(), found.end(),
            [](const StagedDirectory::Leftover& a, const StagedDirectory::Leftover& b) { return a.path < b.path; });
  return found;
}

}  // namespace

StagedDirectory::StagedDirectory(fs::path final_dir, std::string marker, std::string setting)
    : final_(std::move(final_dir)), marker_(std::move(marker)), setting_(std::move(setting)) {
  STRATA_CHECK(!final_.filename().empty() && final_.filename() != "." && final_.filename() != "..",
               "{} '{}' names no folder", setting_, final_.string());
  check_replaceable();
  staging_ = free_staging_name(final_);
  const std::string why = create_directories_problem(staging_);
  STRATA_CHECK(why.empty(), "cannot create {} '{}' (staging folder '{}'): {}", setting_, final_.string(),
               staging_.string(), why);
}

StagedDirectory::StagedDirectory(fs::path final_dir, std::string marker, std::string setting, const fs::path& leftover)
    : final_(std::move(final_dir)), marker_(std::move(marker)), setting_(std::move(setting)) {
  check_replaceable();
  adopted_ = true;
  if (staging_pid(final_, leftover) == ::getpid()) {  // left by an earlier process with this pid
    staging_ = leftover;
    return;
  }
  staging_ = free_staging_name(final_);
  std::error_code ec;
  fs::rename(leftover, staging_, ec);
  STRATA_CHECK(!ec, "cannot adopt the interrupted run's folder '{}' as '{}': {}", leftover.string(), staging_.string(),
               ec.message());
}

std::vector<StagedDirectory::Leftover> StagedDirectory::leftovers(const fs::path& final_dir) {
  return siblings(final_dir, staging_infix());
}

StagedDirectory::~StagedDirectory() {
  if (!committed_ && !adopted_) {
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
  // An earlier output a process moved aside and was killed before removing (or putting back).
  for (const Leftover& l : siblings(final_, ".old-"))
    if (!l.running) fs::remove_all(l.path, ec);
}

}  // namespace strata
