#include "datasets/byte_source.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace strata::data {
namespace {

class FileSource final : public ByteSource {
 public:
  explicit FileSource(const fs::path& path) : ByteSource(path.string()) {
    std::error_code ec;
    STRATA_CHECK(!fs::is_directory(path, ec), "'{}' is a directory, expected a file", path.string());
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    STRATA_CHECK(fd_ >= 0, "cannot open '{}': {}", path.string(), std::strerror(errno));
#ifdef POSIX_FADV_SEQUENTIAL
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  }
  ~FileSource() override {
    if (fd_ >= 0) ::close(fd_);
  }
  size_t read(char* buf, size_t cap) override {
    for (;;) {
      const ssize_t n = ::read(fd_, buf, cap);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno == EINTR) continue;
      STRATA_FAIL("error reading '{}': {}", name(), std::strerror(errno));
    }
  }

 private:
  int fd_ = -1;
};

class MemorySource final : public ByteSource {
 public:
  MemorySource(std::string data, std::string name) : ByteSource(std::move(name)), data_(std::move(data)) {}
  size_t read(char* buf, size_t cap) override {
    const size_t n = std::min(cap, data_.size() - pos_);
    std::memcpy(buf, data_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  std::string data_;
  size_t pos_ = 0;
};

// Puts bytes already read back in front of a stream (used after sniffing the magic).
class PrefixedSource final : public ByteSource {
 public:
  PrefixedSource(std::string prefix, std::unique_ptr<ByteSource> inner)
      : ByteSource(inner->name()), prefix_(std::move(prefix)), inner_(std::move(inner)) {}
  size_t read(char* buf, size_t cap) override {
    if (pos_ < prefix_.size()) {
      const size_t n = std::min(cap, prefix_.size() - pos_);
      std::memcpy(buf, prefix_.data() + pos_, n);
      pos_ += n;
      return n;
    }
    return inner_->read(buf, cap);
  }

 private:
  std::string prefix_;
  size_t pos_ = 0;
  std::unique_ptr<ByteSource> inner_;
};

// Streaming gzip decompression with zlib. Concatenated members are decoded in turn
// (as gzip(1) does); the stream must end exactly at the end of a member.
class GzipSource final : public ByteSource {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> inner)
      : ByteSource(inner->name()), inner_(std::move(inner)), in_(1 << 18) {
    std::memset(&zs_, 0, sizeof zs_);
    // 15 window bits + 16: gzip wrapper only.
    STRATA_ASSERT(inflateInit2(&zs_, 15 + 16) == Z_OK, "zlib inflateInit2 failed");
  }
  ~GzipSource() override { inflateEnd(&zs_); }

  size_t read(char* buf, size_t cap) override {
    if (done_ || cap == 0) return 0;
    zs_.next_out = reinterpret_cast<Bytef*>(buf);
    zs_.avail_out = static_cast<uInt>(std::min<size_t>(cap, 1u << 30));
    while (zs_.avail_out > 0) {
      if (zs_.avail_in == 0 && !inner_eof_) refill();
      if (zs_.avail_in == 0 && inner_eof_) {
        if (at_member_start_) {
          STRATA_CHECK(members_ > 0, "'{}': empty gzip stream (no compressed data)", name());
          done_ = true;  // clean end after the last member
          break;
        }
        STRATA_FAIL("'{}': truncated gzip stream (the compressed data ends after {} bytes, before the end of the "
                    "gzip member)",
                    name(), consumed_);
      }
      if (at_member_start_) {
        // A new member must start with the gzip magic; anything else is trailing garbage.
        if (zs_.avail_in < 2 && !inner_eof_) refill_keep();
        if (zs_.avail_in < 2 || zs_.next_in[0] != 0x1f || zs_.next_in[1] != 0x8b)
          STRATA_FAIL("'{}': corrupt gzip data: {} unexpected bytes after the end of the gzip stream (at "
                      "compressed offset {})",
                      name(), zs_.avail_in, consumed_);
        at_member_start_ = false;
        ++members_;
      }
      const uInt before = zs_.avail_in;
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      consumed_ += before - zs_.avail_in;
      if (rc == Z_STREAM_END) {
        STRATA_ASSERT(inflateReset(&zs_) == Z_OK, "zlib inflateReset failed");
        at_member_start_ = true;
        continue;
      }
      if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT)
        STRATA_FAIL("'{}': corrupt gzip data ({}) at compressed offset {}", name(),
                    zs_.msg ? zs_.msg : "invalid deflate stream", consumed_);
      if (rc == Z_MEM_ERROR) STRATA_FAIL("'{}': out of memory while decompressing", name());
      // Z_BUF_ERROR: no progress possible with the input at hand; loop refills.
      if (rc == Z_BUF_ERROR && zs_.avail_in != 0) STRATA_UNREACHABLE("zlib made no progress on '{}'", name());
    }
    return cap - zs_.avail_out;
  }

 private:
  void refill() {
    const size_t n = inner_->read(in_.data(), in_.size());
    if (n == 0) inner_eof_ = true;
    zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
    zs_.avail_in = static_cast<uInt>(n);
  }
  // Tops up the input buffer keeping the unread bytes (used to see two magic bytes).
  void refill_keep() {
    const size_t have = zs_.avail_in;
    std::memmove(in_.data(), zs_.next_in, have);
    const size_t n = inner_->read(in_.data() + have, in_.size() - have);
    if (n == 0) inner_eof_ = true;
    zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
    zs_.avail_in = static_cast<uInt>(have + n);
  }

  std::unique_ptr<ByteSource> inner_;
  std::vector<char> in_;
  z_stream zs_;
  bool inner_eof_ = false, done_ = false, at_member_start_ = true;
  uint64_t consumed_ = 0;
  int members_ = 0;
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Reads up to n bytes (fewer only at the end of the stream).
std::string read_prefix(ByteSource& src, size_t n) {
  std::string out(n, '\0');
  size_t have = 0;
  while (have < n) {
    const size_t k = src.read(out.data() + have, n - have);
    if (k == 0) break;
    have += k;
  }
  out.resize(have);
  return out;
}

}  // namespace

std::unique_ptr<ByteSource> open_raw_file(const fs::path& path) { return std::make_unique<FileSource>(path); }

std::unique_ptr<ByteSource> gunzip(std::unique_ptr<ByteSource> inner) {
  return std::make_unique<GzipSource>(std::move(inner));
}

std::unique_ptr<ByteSource> memory_source(std::string data, std::string name) {
  return std::make_unique<MemorySource>(std::move(data), std::move(name));
}

std::unique_ptr<ByteSource> maybe_gunzip(std::unique_ptr<ByteSource> inner) {
  std::string magic = read_prefix(*inner, 2);
  const bool gz = magic.size() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
                  static_cast<unsigned char>(magic[1]) == 0x8b;
  auto whole = std::make_unique<PrefixedSource>(std::move(magic), std::move(inner));
  if (gz) return gunzip(std::move(whole));
  return whole;
}

std::unique_ptr<ByteSource> open_input(const fs::path& path) {
  auto raw = open_raw_file(path);
  std::string magic = read_prefix(*raw, 2);
  const bool gz = magic.size() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
                  static_cast<unsigned char>(magic[1]) == 0x8b;
  STRATA_CHECK(gz || !ends_with(path.string(), ".gz"),
               "'{}': not a gzip file (the name ends in .gz but the file {}); the file is damaged or mislabelled",
               path.string(), magic.empty() ? "is empty" : "does not start with the gzip magic bytes 1f 8b");
  auto whole = std::make_unique<PrefixedSource>(std::move(magic), std::move(raw));
  if (gz) return gunzip(std::move(whole));
  return whole;
}

std::string read_all(ByteSource& src) {
  std::string out;
  std::vector<char> buf(1 << 20);
  size_t n;
  while ((n = src.read(buf.data(), buf.size())) > 0) out.append(buf.data(), n);
  return out;
}

}  // namespace strata::data
