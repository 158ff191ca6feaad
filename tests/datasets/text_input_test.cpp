// Streaming text input: line endings, gzip, archives, fields, numbers and CSV.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "datasets/archive.h"
#include "datasets/byte_source.h"
#include "datasets/line_reader.h"
#include "datasets/text_fields.h"
#include "tests/datasets/fixtures.h"
#include "tests/support/test_support.h"

namespace strata::data {
namespace {

using testing::TempDir;

std::vector<std::string> all_lines(ByteSource& src, size_t block = 1 << 20) {
  LineReader r(src, block);
  std::vector<std::string> out;
  std::string_view line;
  while (r.next(line)) out.emplace_back(line);
  return out;
}

std::vector<std::string> lines_of(const std::string& text, size_t block = 1 << 20) {
  auto src = memory_source(text, "mem");
  return all_lines(*src, block);
}

TEST(LineReader, AllLineEndingsAndMissingFinalNewline) {
  using V = std::vector<std::string>;
  EXPECT_EQ(lines_of("a\nb\n"), (V{"a", "b"}));
  EXPECT_EQ(lines_of("a\r\nb\r\n"), (V{"a", "b"}));
  EXPECT_EQ(lines_of("a\rb\r"), (V{"a", "b"}));
  EXPECT_EQ(lines_of("a\nb"), (V{"a", "b"}));
  EXPECT_EQ(lines_of("a\r\nb"), (V{"a", "b"}));
  EXPECT_EQ(lines_of("a\n\nb\n"), (V{"a", "", "b"}));
  EXPECT_EQ(lines_of("a\r\n\r\nb"), (V{"a", "", "b"}));
  EXPECT_EQ(lines_of(""), V{});
  EXPECT_EQ(lines_of("\n"), (V{""}));
}

TEST(LineReader, LinesLongerThanTheBufferAndCrlfSplitAcrossReads) {
  // Block sizes that put the CR of a CRLF at the very end of a buffer fill.
  std::string text;
  std::vector<std::string> want;
  for (int i = 0; i < 200; ++i) {
    want.push_back(std::string(static_cast<size_t>(i % 37), 'x') + std::to_string(i));
    text += want.back() + (i % 3 == 0 ? "\r\n" : i % 3 == 1 ? "\n" : "\r");
  }
  for (size_t block : {1, 2, 3, 7, 16, 64, 1 << 20}) EXPECT_EQ(lines_of(text, block), want) << "block " << block;
}

TEST(LineReader, SkipsAByteOrderMarkAtTheStartOnly) {
  using V = std::vector<std::string>;
  const std::string bom = "\xEF\xBB\xBF";
  // Any block size, so a mark split across reads of the source is found too.
  for (size_t block : {1, 2, 3, 1 << 20}) {
    EXPECT_EQ(lines_of(bom + "a b\nc\n", block), (V{"a b", "c"})) << "block " << block;
    EXPECT_EQ(lines_of(bom + "\r\nx", block), (V{"", "x"})) << "block " << block;
    EXPECT_EQ(lines_of(bom, block), (V{""})) << "block " << block;
    // Only at the very start: elsewhere the bytes are data.
    EXPECT_EQ(lines_of("a\n" + bom + "b", block), (V{"a", bom + "b"})) << "block " << block;
    EXPECT_EQ(lines_of(" " + bom + "a", block), (V{" " + bom + "a"})) << "block " << block;
  }
}

TEST(LineReader, CountsLinesForMessages) {
  auto src = memory_source("x\r\ny\r\nz", "f.txt");
  LineReader r(*src);
  std::string_view line;
  ASSERT_TRUE(r.next(line));
  ASSERT_TRUE(r.next(line));
  EXPECT_EQ(r.line_number(), 2);
  EXPECT_EQ(r.where().str(), "f.txt:2");
}

TEST(Gzip, DecodesSingleAndConcatenatedMembers) {
  TempDir dir;
  const auto p = dir.write_gz("a.txt.gz", "hello\nworld\n");
  auto src = open_input(p);
  EXPECT_EQ(read_all(*src), "hello\nworld\n");
  // gzip(1) output of several members concatenated decodes to the concatenation.
  const auto q = dir.write("b.gz", testing::gzip_bytes("one\n") + testing::gzip_bytes("two\n"));
  auto src2 = open_input(q);
  EXPECT_EQ(read_all(*src2), "one\ntwo\n");
  // Without the magic, a plain file reads as is.
  const auto r = dir.write("c.txt", "plain");
  auto src3 = open_input(r);
  EXPECT_EQ(read_all(*src3), "plain");
}

TEST(Gzip, LargeStreamRoundTrips) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 200000; ++i) text += std::to_string(i * 7919 % 100003) + "," + std::to_string(i) + "\n";
  const auto p = dir.write_gz("big.csv.gz", text);
  auto src = open_input(p);
  EXPECT_EQ(read_all(*src), text);
}

TEST(GzipErrorTest, TruncatedStreamIsReported) {
  TempDir dir;
  std::string text(100000, 'a');
  for (size_t i = 0; i < text.size(); i += 7) text[i] = static_cast<char>('a' + i % 26);
  const auto p = dir.write_gz("t.gz", text);
  testing::truncate_file(p, fs::file_size(p) / 2);
  testing::expect_user_error([&] { auto s = open_input(p); read_all(*s); }, {p.string(), "truncated gzip"});
}

TEST(GzipErrorTest, CorruptDataIsReported) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 5000; ++i) text += std::to_string(i) + "\n";
  const auto p = dir.write_gz("c.gz", text);
  for (uintmax_t off = 12; off < 40; ++off) testing::corrupt_byte(p, off);
  testing::expect_user_error([&] { auto s = open_input(p); read_all(*s); }, {p.string(), "corrupt gzip"});
}

TEST(GzipErrorTest, TrailingGarbageAndMislabelledFiles) {
  TempDir dir;
  const auto p = dir.write("g.gz", testing::gzip_bytes("ok\n") + "garbage!");
  testing::expect_user_error([&] { auto s = open_input(p); read_all(*s); }, {p.string(), "after the end of the gzip"});
  const auto q = dir.write("plain.txt.gz", "not compressed\n");
  testing::expect_user_error([&] { open_input(q); }, {q.string(), "not a gzip file"});
  const auto e = dir.write("empty.gz", "");
  testing::expect_user_error([&] { open_input(e); }, {e.string(), "is empty"});
}

TEST(FileErrorTest, MissingFileNamesThePath) {
  testing::expect_user_error([] { open_input("/nonexistent/strata/file.txt"); },
                             {"/nonexistent/strata/file.txt", "cannot open"});
}

TEST(Archive, StreamsMembersOfTarGzAndZip) {
  TempDir dir;
  for (const char* fmt : {"tgz", "zip"}) {
    const auto p = dir / (std::string("a.") + fmt);
    testing::write_archive(p, fmt, {{"d/x.txt", "1\n2\n"}, {"d/y.txt", std::string(300000, 'y') + "\n"}});
    std::vector<std::string> names;
    std::vector<size_t> sizes;
    for_each_archive_member(p, [&](const std::string& m, ByteSource& s) {
      names.push_back(m);
      sizes.push_back(read_all(s).size());
      EXPECT_EQ(s.name(), p.string() + ":" + m);
    });
    EXPECT_EQ(names, (std::vector<std::string>{"d/x.txt", "d/y.txt"})) << fmt;
    EXPECT_EQ(sizes, (std::vector<size_t>{4, 300001})) << fmt;
    EXPECT_EQ(member_basename(names[1]), "y.txt");
    // A visitor may skip a member entirely.
    int seen = 0;
    for_each_archive_member(p, [&](const std::string&, ByteSource&) { ++seen; });
    EXPECT_EQ(seen, 2);
  }
}

TEST(ArchiveErrorTest, GarbageTruncatedAndMissingArchives) {
  TempDir dir;
  const auto garbage = dir.write("bad.zip", std::string(5000, 'z'));
  testing::expect_user_error([&] { list_archive_members(garbage); }, {garbage.string(), "not a readable archive"});
  for (const char* fmt : {"tgz", "zip"}) {
    const auto p = dir / (std::string("t.") + fmt);
    std::string big;
    for (int i = 0; i < 100000; ++i) big += std::to_string(i * 31 % 977) + "\n";
    testing::write_archive(p, fmt, {{"x/node.dat", big}});
    testing::truncate_file(p, fs::file_size(p) / 2);
    testing::expect_user_error(
        [&] { for_each_archive_member(p, [&](const std::string&, ByteSource& s) { read_all(s); }); },
        {p.string(), "truncated or corrupt"});
  }
  // A zip cut where its second member starts: the first member is whole, yet the archive is refused.
  const auto two = dir / "two.zip";
  testing::write_archive(two, "zip", {{"x/a.dat", "1\n"}, {"x/b.dat", "2\n"}});
  std::ifstream in(two, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t second = bytes.find("PK\x03\x04", 1);
  ASSERT_NE(second, std::string::npos);
  testing::truncate_file(two, second);
  testing::expect_user_error([&] { list_archive_members(two); },
                             {two.string(), "cannot read the next archive member (truncated or corrupt archive)"});
  testing::expect_user_error([&] { list_archive_members(dir / "none.zip"); }, {"none.zip", "does not exist"});
}

TEST(Fields, SplitTrimAndParse) {
  std::vector<std::string_view> f;
  split_fields("a\t\tb", '\t', f);
  EXPECT_EQ(f.size(), 3u);
  EXPECT_EQ(f[1], "");
  split_blanks("  12 \t 34   ", f);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0], "12");
  EXPECT_EQ(f[1], "34");
  EXPECT_EQ(*try_parse_int("-42"), -42);
  EXPECT_EQ(*try_parse_int("+7"), 7);
  EXPECT_FALSE(try_parse_int("4x"));
  EXPECT_FALSE(try_parse_int(""));
  EXPECT_DOUBLE_EQ(*try_parse_double("2.5e-3"), 2.5e-3);
  EXPECT_EQ(parse_integral("2.0", {"f", 1}, "id"), 2);
  EXPECT_EQ(parse_integral("17", {"f", 1}, "id"), 17);
}

TEST(Fields, ExcerptShowsControlBytesAndShortensLongTokens) {
  EXPECT_EQ(excerpt("abc"), "abc");
  EXPECT_EQ(excerpt(std::string_view("2\0", 2)), "2\\x00");
  EXPECT_EQ(excerpt("a\tb\r\n\x1b\x7f"), "a\\tb\\r\\n\\x1b\\x7f");
  EXPECT_EQ(excerpt("x\xEF\xBB\xBFy"), "x\\ufeffy");
  EXPECT_EQ(excerpt("caf\xC3\xA9"), "caf\xC3\xA9");  // UTF-8 is kept as is
  EXPECT_EQ(excerpt(std::string(100, 'x')), std::string(60, 'x') + "...");
  // Cut before a character, not inside it: "é" is 2 bytes, at bytes 59 and 60.
  EXPECT_EQ(excerpt(std::string(59, 'x') + "\xC3\xA9zz"), std::string(59, 'x') + "...");
}

TEST(FieldsErrorTest, IntegersBeyondInt64AreOutOfRange) {
  testing::expect_user_error(
      [] {
        parse_int("99999999999999999999", {"e.txt", 2}, "source id");
      },
      {"e.txt:2: source id '99999999999999999999' is out of range (at most 9223372036854775807)"});
  testing::expect_user_error(
      [] {
        parse_int("-99999999999999999999", {"e.txt", 3}, "row");
      },
      {"e.txt:3: row '-99999999999999999999' is out of range (at least -9223372036854775808)"});
  testing::expect_user_error(
      [] {
        parse_integral("99999999999999999999", {"t.tsv", 4}, "id");
      },
      {"t.tsv:4: id '99999999999999999999' is out of range"});
  EXPECT_EQ(parse_int("9223372036854775807", {"e.txt", 1}, "id"), INT64_MAX);
  EXPECT_TRUE(is_integer_syntax("-12"));
  EXPECT_FALSE(is_integer_syntax("1e3"));
  EXPECT_FALSE(is_integer_syntax("-"));
}

TEST(FieldsErrorTest, NonNumericFieldsNameFileLineAndField) {
  testing::expect_user_error([] { parse_int("12a", {"edges.txt", 5}, "source id"); },
                             {"edges.txt:5", "source id", "'12a'", "expected an integer"});
  testing::expect_user_error([] { parse_float("abc", {"x.csv", 9}, "weight"); },
                             {"x.csv:9", "weight", "expected a number"});
  testing::expect_user_error(
      [] {
        parse_float("-1e-60", {"x.csv", 10}, "weight");
      },
      {"x.csv:10", "weight is '-1e-60', a number float32 cannot hold"});
  testing::expect_user_error([] { parse_integral("2.5", {"t.tsv", 3}, "id"); }, {"t.tsv:3", "integer id"});
}

TEST(Csv, Rfc4180QuotingAcrossLines) {
  auto src = memory_source("id,name,type\r\n0,\"a, b\",x\r\n1,\"say \"\"hi\"\"\",y\n2,\"two\nlines\",z\n3,,w", "t.csv");
  CsvReader csv(*src);
  std::vector<std::string> row;
  ASSERT_TRUE(csv.next(row));
  EXPECT_EQ(row, (std::vector<std::string>{"id", "name", "type"}));
  ASSERT_TRUE(csv.next(row));
  EXPECT_EQ(row[1], "a, b");
  ASSERT_TRUE(csv.next(row));
  EXPECT_EQ(row[1], "say \"hi\"");
  ASSERT_TRUE(csv.next(row));
  EXPECT_EQ(row[1], "two\nlines");
  EXPECT_EQ(csv.where().line, 4);
  ASSERT_TRUE(csv.next(row));
  EXPECT_EQ(row, (std::vector<std::string>{"3", "", "w"}));
  EXPECT_FALSE(csv.next(row));
}

TEST(CsvErrorTest, UnterminatedQuoteAndTextAfterQuote) {
  auto a = memory_source("id,name\n0,\"open\n", "a.csv");
  CsvReader ca(*a);
  std::vector<std::string> row;
  ca.next(row);
  testing::expect_user_error([&] { ca.next(row); }, {"a.csv:2", "never closed"});
  auto b = memory_source("0,\"x\"y\n", "b.csv");
  CsvReader cb(*b);
  testing::expect_user_error([&] { cb.next(row); }, {"b.csv:1", "after its closing quote"});
}

}  // namespace
}  // namespace strata::data
