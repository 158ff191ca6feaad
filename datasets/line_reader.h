// Line-by-line reading of a byte stream, for the text formats. Lines may end in LF,
// CRLF or a lone CR; the last line may lack a terminator. Lines are returned as
// views into an internal buffer (valid until the next call), so reading a large file
// allocates nothing per line. where() gives the "file:line" that error messages cite.
// A UTF-8 byte-order mark (EF BB BF, as Windows editors and Excel write) at the very
// start of the input is skipped: it is not part of the first line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "datasets/byte_source.h"

namespace strata::data {

// A position in a text input, cheap to pass around: "cora.cites:17".
struct Where {
  std::string_view file;
  int64_t line = 0;  // 0 = the whole file
  std::string str() const;
};

class LineReader {
 public:
  explicit LineReader(ByteSource& src, size_t block_bytes = size_t{1} << 20);

  // The next line without its terminator (and the first without a leading byte-order
  // mark); false at the end of the input.
  bool next(std::string_view& line);
  // 1-based number of the line last returned.
  int64_t line_number() const { return line_no_; }
  const std::string& name() const { return src_.name(); }
  Where where() const { return {src_.name(), line_no_}; }

 private:
  bool refill();  // false when the source is exhausted
  bool next_line(std::string_view& line);  // next() without the byte-order mark check

  ByteSource& src_;
  std::vector<char> buf_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  int64_t line_no_ = 0;
};

}  // namespace strata::data
