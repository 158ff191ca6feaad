// Field splitting and number parsing for the text formats, with errors that cite
// "file:line", the field and what was expected. Numbers use std::from_chars (no
// locale, no allocation), so parsing runs at memory speed on large files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "datasets/line_reader.h"

namespace strata::data {

// Splits at every `sep` (empty fields kept).
void split_fields(std::string_view line, char sep, std::vector<std::string_view>& out);
// Splits at runs of spaces and tabs, ignoring leading and trailing blanks.
void split_blanks(std::string_view line, std::vector<std::string_view>& out);
std::string_view trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);

std::optional<int64_t> try_parse_int(std::string_view s);
// Accepts integers and decimals ("2", "2.0", "1e-3", "nan"); leading '+' allowed.
std::optional<double> try_parse_double(std::string_view s);
std::optional<float> try_parse_float(std::string_view s);

// True when `s` is written as an integer ('+' or '-', then digits), in range or not.
bool is_integer_syntax(std::string_view s);

// Parse or throw: "<where>: <what> is 'abc', expected an integer"; an integer int64 cannot hold is "out of range".
int64_t parse_int(std::string_view s, const Where& where, std::string_view what);
double parse_double(std::string_view s, const Where& where, std::string_view what);
float parse_float(std::string_view s, const Where& where, std::string_view what);
// As parse_float (which refuses values that overflow a float), refusing nan and inf too: for edge
// weights and matrix values, which no kernel result would survive.
float parse_finite_float(std::string_view s, const Where& where, std::string_view what);
// An id given as an integral float ("2.0", as in the R-GCN TSVs) or an integer.
int64_t parse_integral(std::string_view s, const Where& where, std::string_view what);

// A token or line as an error message quotes it: control bytes escaped (\t, \r, \n, else \x00: a NUL would cut
// the message short) and a byte-order mark inside it written \ufeff, so no byte is invisible; longer than
// `max_chars` bytes, it is cut (at a UTF-8 character boundary) and ends in "...".
std::string excerpt(std::string_view s, size_t max_chars = 60);

// The UTF-8 byte-order mark some editors write at the start of a file.
inline constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
// `first_line` without a leading byte-order mark.
inline std::string_view without_byte_order_mark(std::string_view first_line) {
  return first_line.substr(0, kByteOrderMark.size()) == kByteOrderMark ? first_line.substr(kByteOrderMark.size())
                                                                       : first_line;
}

// Reads RFC 4180 CSV records: fields separated by `sep`, optionally quoted with '"',
// "" inside quotes for a quote, and quoted fields may span lines.
class CsvReader {
 public:
  explicit CsvReader(ByteSource& src, char sep = ',') : lines_(src), sep_(sep) {}
  // The next record's fields; false at the end. Throws on an unterminated quote.
  bool next(std::vector<std::string>& fields);
  // The line on which the last record started.
  Where where() const { return {lines_.name(), record_line_}; }
  const std::string& name() const { return lines_.name(); }

 private:
  LineReader lines_;
  char sep_;
  int64_t record_line_ = 0;
};

}  // namespace strata::data
