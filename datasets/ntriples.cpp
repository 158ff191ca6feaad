#include "datasets/ntriples.h"

#include <cctype>

#include "core/error.h"

namespace strata::data {
namespace {

class Cursor {
 public:
  Cursor(std::string_view s, const Where& w) : s_(s), w_(w) {}
  bool done() const { return i_ >= s_.size(); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  char take() { return s_[i_++]; }
  void skip_blanks() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  [[noreturn]] void fail(std::string_view what) const {
    STRATA_FAIL("{}:{}: {} (N-Triples: <subject> <predicate> <object> .)", w_.str(), i_ + 1, what);
  }

  // \uXXXX or \UXXXXXXXX after the backslash and the letter, appended as UTF-8.
  void unicode_escape(int digits, std::string& out) {
    if (i_ + static_cast<size_t>(digits) > s_.size()) fail("truncated \\u escape");
    uint32_t cp = 0;
    for (int k = 0; k < digits; ++k) {
      const char c = take();
      int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (v < 0) fail(fmt::format("'{}' is not a hex digit in a \\u escape", c));
      cp = cp * 16 + static_cast<uint32_t>(v);
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) fail(fmt::format("escape U+{:X} is not a Unicode scalar value", cp));
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  void iri(std::string& out, const char* role) {
    if (peek() != '<') fail(fmt::format("expected '<' to start the {} IRI", role));
    take();
    out.clear();
    for (;;) {
      if (done()) fail(fmt::format("the {} IRI is never closed with '>'", role));
      const char c = take();
      if (c == '>') break;
      if (c == '\\') {
        const char e = done() ? '\0' : take();
        if (e == 'u') unicode_escape(4, out);
        else if (e == 'U') unicode_escape(8, out);
        else fail("only \\u and \\U escapes are allowed in IRIs");
        continue;
      }
      if (c == ' ' || c == '<' || c == '"' || c == '{' || c == '}' || c == '|' || c == '^' || c == '`' ||
          static_cast<unsigned char>(c) < 0x20)
        fail(fmt::format("character '{}' is not allowed in an IRI", c == ' ' ? std::string("space") : std::string(1, c)));
      out += c;
    }
  }

  void blank(std::string& out) {
    take();  // '_'
    if (peek() != ':') fail("expected ':' after '_' in a blank node label (_:label)");
    take();
    out.clear();
    while (!done() && peek() != ' ' && peek() != '\t') {
      if (peek() == '.' && (i_ + 1 == s_.size() || s_[i_ + 1] == ' ' || s_[i_ + 1] == '\t')) break;
      out += take();
    }
    if (out.empty()) fail("empty blank node label");
  }

  void literal(Term& t) {
    take();  // '"'
    t.value.clear();
    for (;;) {
      if (done()) fail("the literal is never closed with '\"'");
      const char c = take();
      if (c == '"') break;
      if (c != '\\') {
        t.value += c;
        continue;
      }
      if (done()) fail("the literal ends inside an escape");
      switch (const char e = take()) {
        case 't': t.value += '\t'; break;
        case 'b': t.value += '\b'; break;
        case 'n': t.value += '\n'; break;
        case 'r': t.value += '\r'; break;
        case 'f': t.value += '\f'; break;
        case '"': t.value += '"'; break;
        case '\'': t.value += '\''; break;
        case '\\': t.value += '\\'; break;
        case 'u': unicode_escape(4, t.value); break;
        case 'U': unicode_escape(8, t.value); break;
        default: fail(fmt::format("unknown escape '\\{}' in a literal", e));
      }
    }
    t.lang.clear();
    t.datatype.clear();
    if (peek() == '@') {
      take();
      while (!done() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '-'))
        t.lang += static_cast<char>(std::tolower(static_cast<unsigned char>(take())));
      if (t.lang.empty() || !std::isalpha(static_cast<unsigned char>(t.lang[0]))) fail("expected a language tag after '@'");
    } else if (peek() == '^') {
      take();
      if (peek() != '^') fail("expected '^^<datatype>' after the literal");
      take();
      iri(t.datatype, "datatype");
    }
  }

  void term(Term& t, const char* role, bool allow_literal) {
    if (peek() == '<') {
      t.kind = TermKind::Iri;
      iri(t.value, role);
      t.lang.clear();
      t.datatype.clear();
    } else if (peek() == '_') {
      t.kind = TermKind::Blank;
      blank(t.value);
      t.lang.clear();
      t.datatype.clear();
    } else if (allow_literal && peek() == '"') {
      t.kind = TermKind::Literal;
      literal(t);
    } else {
      fail(fmt::format("expected {} for the {}", allow_literal ? "an IRI <...>, a blank node _:x or a literal \"...\""
                                                               : "an IRI <...> or a blank node _:x",
                       role));
    }
  }

  void require_blank(const char* after) {
    if (peek() != ' ' && peek() != '\t') fail(fmt::format("expected a space after the {}", after));
    skip_blanks();
  }

 private:
  std::string_view s_;
  const Where& w_;
  size_t i_ = 0;
};

void append_escaped(std::string& out, const std::string& text) {
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
}

}  // namespace

std::string Term::canonical() const {
  switch (kind) {
    case TermKind::Iri: return "<" + value + ">";
    case TermKind::Blank: return "_:" + value;
    case TermKind::Literal: {
      std::string out = "\"";
      append_escaped(out, value);
      out += '"';
      if (!lang.empty()) out += "@" + lang;
      else if (!datatype.empty()) out += "^^<" + datatype + ">";
      return out;
    }
  }
  return value;
}

bool parse_ntriples_line(std::string_view line, const Where& where, Triple& out) {
  Cursor c(line, where);
  c.skip_blanks();
  if (c.done() || c.peek() == '#') return false;
  c.term(out.subject, "subject", false);
  c.require_blank("subject");
  if (c.peek() != '<') c.fail("expected '<' to start the predicate IRI (predicates are IRIs)");
  c.term(out.predicate, "predicate", false);
  c.require_blank("predicate");
  c.term(out.object, "object", true);
  c.skip_blanks();
  if (c.peek() != '.') c.fail("expected '.' to end the triple");
  c.take();
  c.skip_blanks();
  if (!c.done() && c.peek() != '#') c.fail("unexpected text after the final '.'");
  return true;
}

}  // namespace strata::data
