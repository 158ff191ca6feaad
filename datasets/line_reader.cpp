#include "datasets/line_reader.h"

#include <fmt/format.h>

#include <cstring>

#include "datasets/text_fields.h"

namespace strata::data {

std::string Where::str() const {
  return line > 0 ? fmt::format("{}:{}", file, line) : std::string(file);
}

LineReader::LineReader(ByteSource& src, size_t block_bytes) : src_(src), buf_(block_bytes) {}

bool LineReader::refill() {
  if (eof_) return false;
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);  // a line longer than the buffer
  const size_t n = src_.read(buf_.data() + end_, buf_.size() - end_);
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ += n;
  return true;
}

bool LineReader::next(std::string_view& line) {
  if (!next_line(line)) return false;
  // Lines are whole here, so a mark split across reads of the source is found too.
  if (line_no_ == 1) line = without_byte_order_mark(line);
  return true;
}

bool LineReader::next_line(std::string_view& line) {
  size_t scanned = 0;  // bytes after begin_ known to hold no terminator
  for (;;) {
    const char* base = buf_.data();
    const char* from = base + begin_ + scanned;
    const size_t avail = end_ - begin_ - scanned;
    const char* nl = static_cast<const char*>(std::memchr(from, '\n', avail));
    const size_t cr_span = nl ? static_cast<size_t>(nl - from) : avail;
    const char* cr = static_cast<const char*>(std::memchr(from, '\r', cr_span));
    if (cr) {
      const size_t cr_pos = static_cast<size_t>(cr - base);
      if (cr_pos + 1 == end_ && !eof_) {
        // CR at the end of the buffer: it may be the first half of a CRLF.
        scanned = cr_pos - begin_;
        if (!refill()) {
          // Input ended right after the CR; loop sees it with eof_ set.
        }
        continue;
      }
      line = std::string_view(base + begin_, cr_pos - begin_);
      begin_ = cr_pos + 1;
      if (begin_ < end_ && buf_[begin_] == '\n') ++begin_;
      ++line_no_;
      return true;
    }
    if (nl) {
      const size_t nl_pos = static_cast<size_t>(nl - base);
      line = std::string_view(base + begin_, nl_pos - begin_);
      begin_ = nl_pos + 1;
      ++line_no_;
      return true;
    }
    scanned = end_ - begin_;
    if (!refill()) {
      if (begin_ == end_) return false;
      line = std::string_view(buf_.data() + begin_, end_ - begin_);  // last line, no terminator
      begin_ = end_;
      ++line_no_;
      return true;
    }
  }
}

}  // namespace strata::data
