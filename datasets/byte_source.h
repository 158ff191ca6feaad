// Byte streams the loaders read from: plain files, gzip streams (recognised by their
// magic bytes, any number of members) and in-memory text. Archive members (tar, zip)
// come from archive.h as the same interface, so every parser reads one kind of
// stream whatever the container. Errors name the input and say what went wrong
// (missing file, truncated or corrupt compressed data).
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

namespace strata::data {

namespace fs = std::filesystem;

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // Reads up to `cap` bytes into `buf`; returns 0 only at the end of the stream.
  // Throws UserError naming the input when the data cannot be read.
  virtual size_t read(char* buf, size_t cap) = 0;
  // How messages name this input: a path, or "archive.tgz:member/name".
  const std::string& name() const { return name_; }

 protected:
  explicit ByteSource(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

// The file's raw bytes.
std::unique_ptr<ByteSource> open_raw_file(const fs::path& path);
// The file's content: gunzipped when it starts with the gzip magic bytes, raw
// otherwise. A name ending in ".gz" without the magic is an error (a mislabelled or
// damaged file is never parsed as text).
std::unique_ptr<ByteSource> open_input(const fs::path& path);
// Decompresses a gzip stream (all members) read from `inner`.
std::unique_ptr<ByteSource> gunzip(std::unique_ptr<ByteSource> inner);
// Wraps `inner`, gunzipping when its first bytes are the gzip magic.
std::unique_ptr<ByteSource> maybe_gunzip(std::unique_ptr<ByteSource> inner);
// Text held in memory (tests, small embedded inputs).
std::unique_ptr<ByteSource> memory_source(std::string data, std::string name);

// Reads the rest of a stream.
std::string read_all(ByteSource& src);

}  // namespace strata::data
