// An N-Triples parser (W3C RDF 1.1 N-Triples): one `<subject> <predicate> <object> .`
// statement per line. Subjects are IRIs or blank nodes (_:label); objects are IRIs,
// blank nodes or literals ("..." with \t \b \n \r \f \" \' \\ \uXXXX \UXXXXXXXX
// escapes, then optionally @lang or ^^<datatype>). Blank lines and # comments are
// skipped. Errors cite file:line:column and say what was expected there.
#pragma once

#include <string>
#include <string_view>

#include "datasets/line_reader.h"

namespace strata::data {

enum class TermKind : uint8_t { Iri, Blank, Literal };

struct Term {
  TermKind kind = TermKind::Iri;
  std::string value;     // IRI, blank-node label, or the literal's text (escapes decoded, UTF-8)
  std::string lang;      // literal language tag, lower-cased ("" if none)
  std::string datatype;  // literal datatype IRI ("" if none)
  // The term in canonical N-Triples form, used as its identity:
  // <iri>, _:label, "text", "text"@lang, "text"^^<datatype>.
  std::string canonical() const;
};

struct Triple {
  Term subject, predicate, object;
};

// Parses one line into `out`; returns false for blank and comment lines.
bool parse_ntriples_line(std::string_view line, const Where& where, Triple& out);

}  // namespace strata::data
