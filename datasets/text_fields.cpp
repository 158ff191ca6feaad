#include "datasets/text_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.h"

namespace strata::data {

void split_fields(std::string_view line, char sep, std::vector<std::string_view>& out) {
  out.clear();
  size_t start = 0;
  for (;;) {
    const void* hit = std::memchr(line.data() + start, sep, line.size() - start);
    if (!hit) {
      out.push_back(line.substr(start));
      return;
    }
    const size_t pos = static_cast<size_t>(static_cast<const char*>(hit) - line.data());
    out.push_back(line.substr(start, pos - start));
    start = pos + 1;
  }
}

void split_blanks(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  size_t i = 0, n = line.size();
  while (i < n) {
    while (i < n && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == n) break;
    size_t j = i;
    while (j < n && line[j] != ' ' && line[j] != '\t') ++j;
    out.push_back(line.substr(i, j - i));
    i = j;
  }
}

std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r' || s[b] == '\n')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '\n')) --e;
  return s.substr(b, e - b);
}

bool starts_with(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::optional<int64_t> try_parse_int(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

template <class T>
static std::optional<T> parse_floating(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  T v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) return std::nullopt;
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> try_parse_double(std::string_view s) { return parse_floating<double>(s); }
std::optional<float> try_parse_float(std::string_view s) { return parse_floating<float>(s); }

std::string excerpt(std::string_view s, size_t max_chars) {
  size_t keep = std::min(s.size(), max_chars);
  // Do not split a UTF-8 character: back off over its continuation bytes (10xxxxxx).
  if (keep < s.size())
    while (keep > 0 && (static_cast<unsigned char>(s[keep]) & 0xC0) == 0x80) --keep;
  std::string out;
  out.reserve(keep + 3);
  for (size_t i = 0; i < keep; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else if (s.substr(i, kByteOrderMark.size()) == kByteOrderMark) {
      out += "\\ufeff";
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (keep < s.size()) out += "...";
  return out;
}

bool is_integer_syntax(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

namespace {
// "<where>: <what> '99999999999999999999' is out of range (at most 9223372036854775807)".
[[noreturn]] void fail_int_range(std::string_view s, const Where& where, std::string_view what) {
  if (s[0] == '-')
    STRATA_FAIL("{}: {} '{}' is out of range (at least {})", where.str(), what, excerpt(s),
                std::numeric_limits<int64_t>::min());
  STRATA_FAIL("{}: {} '{}' is out of range (at most {})", where.str(), what, excerpt(s),
              std::numeric_limits<int64_t>::max());
}
}  // namespace

int64_t parse_int(std::string_view s, const Where& where, std::string_view what) {
  auto v = try_parse_int(s);
  if (!v) {
    if (is_integer_syntax(s)) fail_int_range(s, where, what);
    STRATA_FAIL("{}: {} is '{}', expected an integer", where.str(), what, excerpt(s));
  }
  return *v;
}

double parse_double(std::string_view s, const Where& where, std::string_view what) {
  auto v = try_parse_double(s);
  if (!v) STRATA_FAIL("{}: {} is '{}', expected a number", where.str(), what, excerpt(s));
  return *v;
}

float parse_float(std::string_view s, const Where& where, std::string_view what) {
  auto v = try_parse_float(s);
  if (!v) {
    // A number a float cannot hold gets its own reason: "expected a number" would
    // send the reader looking for a typo in "1e60".
    const auto d = try_parse_double(s);
    STRATA_CHECK(!d || !std::isfinite(*d),
                 "{}: {} is '{}', a number float32 cannot hold (non-zero magnitudes from {:.4g} to {:.4g})",
                 where.str(), what, excerpt(s), static_cast<double>(std::numeric_limits<float>::min()),
                 static_cast<double>(std::numeric_limits<float>::max()));
    STRATA_FAIL("{}: {} is '{}', expected a number", where.str(), what, excerpt(s));
  }
  return *v;
}

float parse_finite_float(std::string_view s, const Where& where, std::string_view what) {
  const float v = parse_float(s, where, what);
  if (!std::isfinite(v)) STRATA_FAIL("{}: {} is '{}', expected a finite number", where.str(), what, excerpt(s));
  return v;
}

int64_t parse_integral(std::string_view s, const Where& where, std::string_view what) {
  if (auto i = try_parse_int(s)) return *i;
  if (is_integer_syntax(s)) fail_int_range(s, where, what);
  auto d = try_parse_double(s);
  if (!d || !std::isfinite(*d) || std::floor(*d) != *d || std::fabs(*d) > 9.0e15)
    STRATA_FAIL("{}: {} is '{}', expected an integer id (such as 2 or 2.0)", where.str(), what, excerpt(s));
  return static_cast<int64_t>(*d);
}

bool CsvReader::next(std::vector<std::string>& fields) {
  fields.clear();
  std::string_view line;
  if (!lines_.next(line)) return false;
  record_line_ = lines_.line_number();
  std::string field;
  bool in_quotes = false, was_quoted = false;
  for (;;) {
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (in_quotes) {
        if (c == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            ++i;
          } else {
            in_quotes = false;
          }
        } else {
          field += c;
        }
      } else if (c == sep_) {
        fields.push_back(std::move(field));
        field.clear();
        was_quoted = false;
      } else if (c == '"' && field.empty() && !was_quoted) {
        in_quotes = was_quoted = true;
      } else {
        if (was_quoted)
          STRATA_FAIL("{}: field {} has text after its closing quote (RFC 4180 CSV expected)", where().str(),
                      fields.size() + 1);
        field += c;
      }
    }
    if (!in_quotes) break;
    // A quoted field spans the line break: keep reading.
    if (!lines_.next(line))
      STRATA_FAIL("{}: quoted field {} is never closed (the file ends inside quotes)", where().str(),
                  fields.size() + 1);
    field += '\n';
  }
  fields.push_back(std::move(field));
  return true;
}

}  // namespace strata::data
