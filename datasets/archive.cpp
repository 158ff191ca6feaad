#include "datasets/archive.h"

#include <archive.h>
#include <archive_entry.h>

#include <memory>

#include "core/error.h"

namespace strata::data {
namespace {

struct ArchiveCloser {
  void operator()(archive* a) const { archive_read_free(a); }
};
using ArchivePtr = std::unique_ptr<archive, ArchiveCloser>;

// libarchive's message, or `otherwise` where it has none (as when a zip ends at a member boundary).
std::string archive_reason(archive* a, const char* otherwise = "libarchive gives no reason") {
  const char* s = archive_error_string(a);
  return s ? s : otherwise;
}

ArchivePtr open_archive(const fs::path& path) {
  std::error_code ec;
  STRATA_CHECK(fs::exists(path, ec), "archive '{}' does not exist", path.string());
  STRATA_CHECK(fs::is_regular_file(path, ec), "'{}' is not a file, expected an archive", path.string());
  ArchivePtr a(archive_read_new());
  STRATA_ASSERT(a != nullptr, "archive_read_new failed");
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  archive_read_support_format_gnutar(a.get());
  archive_read_support_format_zip(a.get());
  if (archive_read_open_filename(a.get(), path.c_str(), 1 << 20) != ARCHIVE_OK)
    STRATA_FAIL("'{}': not a readable archive (truncated or corrupt, or not a tar/zip file): {}", path.string(),
                archive_reason(a.get()));
  return a;
}

// The data of the current member, streamed through archive_read_data.
class MemberSource final : public ByteSource {
 public:
  MemberSource(archive* a, std::string name) : ByteSource(std::move(name)), a_(a) {}
  size_t read(char* buf, size_t cap) override {
    for (;;) {
      const la_ssize_t n = archive_read_data(a_, buf, cap);
      if (n >= 0) return static_cast<size_t>(n);
      if (n == ARCHIVE_RETRY) continue;
      if (n == ARCHIVE_WARN) {
        // A warning with no data is not progress; treat it as the damage it reports.
        STRATA_FAIL("'{}': damaged archive member: {}", name(), archive_reason(a_));
      }
      STRATA_FAIL("'{}': cannot read archive member (truncated or corrupt archive): {}", name(),
                  archive_reason(a_));
    }
  }

 private:
  archive* a_;
};

}  // namespace

bool is_archive_path(const fs::path& path) {
  const std::string s = path.filename().string();
  for (const char* ext : {".tgz", ".tar.gz", ".tar", ".zip", ".tar.bz2", ".tbz2", ".tar.xz", ".txz"}) {
    const std::string_view e(ext);
    if (s.size() > e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0) return true;
  }
  return false;
}

void for_each_archive_member(const fs::path& path,
                             const std::function<void(const std::string&, ByteSource&)>& visit) {
  ArchivePtr a = open_archive(path);
  archive_entry* entry = nullptr;
  for (;;) {
    const int rc = archive_read_next_header(a.get(), &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc == ARCHIVE_RETRY) continue;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
      STRATA_FAIL("'{}': cannot read the next archive member (truncated or corrupt archive): {}", path.string(),
                  archive_reason(a.get(), "the file ends where a member's header should be"));
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    const char* p = archive_entry_pathname(entry);
    const std::string member = p ? p : "";
    MemberSource src(a.get(), path.string() + ":" + member);
    visit(member, src);
  }
}

std::vector<std::string> list_archive_members(const fs::path& path) {
  std::vector<std::string> out;
  for_each_archive_member(path, [&](const std::string& m, ByteSource&) { out.push_back(m); });
  return out;
}

std::string member_basename(const std::string& member) {
  const size_t slash = member.find_last_of('/');
  return slash == std::string::npos ? member : member.substr(slash + 1);
}

}  // namespace strata::data
