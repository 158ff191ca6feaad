// A folder of outputs that appears whole or not at all.
//
// Files are written into a staging folder beside the final one
// (<final>.partial-<pid>, or <final>.partial-<pid>.<n> when an earlier process with
// the same pid left a folder of that name); commit() moves it into place. If the work fails first,
// the destructor removes the staging folder, so an error never leaves a
// half-written folder behind. An existing folder at the final path is replaced
// only when it is empty or holds `marker` (a file every earlier output of the same
// kind has): never a user's file or another folder. `setting` names the path in
// messages ("output.run_dir", "--out").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace strata {

namespace fs = std::filesystem;

class StagedDirectory {
 public:
  // Throws a UserError when the final path exists and may not be replaced, or when
  // the staging folder cannot be created.
  StagedDirectory(fs::path final_dir, std::string marker, std::string setting);
  // Adopts `leftover`, a staging folder an interrupted process left for the same final
  // path (see leftovers()), by renaming it to a staging name of this process (kept as it
  // is when it already has one): the work goes on where it stopped. Throws a UserError when the rename fails (another
  // process adopted it first). If this work fails too, the folder is kept (under this
  // process's name, a leftover again), never removed: it holds the earlier work.
  StagedDirectory(fs::path final_dir, std::string marker, std::string setting, const fs::path& leftover);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  const fs::path& final_path() const { return final_; }
  const fs::path& staging_path() const { return staging_; }
  // Moves the staging folder into place, replacing an earlier output there.
  void commit();

  // The staging folders <final>.partial-<pid>[.<n>] that exist beside `final_dir`, with
  // whether their process is still running: a process killed before it committed
  // (SIGKILL, a crash, a lost machine) leaves its staging folder behind. A folder
  // named with this process's pid is a leftover too (pids repeat across restarts of a
  // container): call this before creating one's own, which never replaces it.
  struct Leftover {
    fs::path path;
    int64_t pid = 0;
    bool running = false;
  };
  static std::vector<Leftover> leftovers(const fs::path& final_dir);

 private:
  void check_replaceable() const;
  fs::path final_, staging_;
  std::string marker_, setting_;
  bool committed_ = false;
  bool adopted_ = false;
};

}  // namespace strata
