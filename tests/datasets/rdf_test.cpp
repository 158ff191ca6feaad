// N-Triples parsing and the R-GCN entity graphs (AIFB, MUTAG; BGS and AM have only
// their label files in the data root).
#include <gtest/gtest.h>

#include "datasets/ntriples.h"
#include "datasets/rdf.h"
#include "tests/datasets/fixtures.h"
#include "tests/support/test_support.h"

namespace strata::data {
namespace {

using testing::TempDir;

Triple parse(const std::string& line) {
  Triple t;
  EXPECT_TRUE(parse_ntriples_line(line, {"t.nt", 1}, t)) << line;
  return t;
}

TEST(NTriples, TermsEscapesLanguageTagsAndDatatypes) {
  Triple t = parse("<http://a/s> <http://a/p> <http://a/o> .");
  EXPECT_EQ(t.subject.kind, TermKind::Iri);
  EXPECT_EQ(t.subject.value, "http://a/s");
  EXPECT_EQ(t.object.canonical(), "<http://a/o>");
  t = parse("_:b12 <http://a/p> \"caf\\u00E9 \\\"x\\\"\\n\\t\\\\\"@EN-gb .");
  EXPECT_EQ(t.subject.kind, TermKind::Blank);
  EXPECT_EQ(t.subject.canonical(), "_:b12");
  EXPECT_EQ(t.object.kind, TermKind::Literal);
  EXPECT_EQ(t.object.value, "caf\xC3\xA9 \"x\"\n\t\\");
  EXPECT_EQ(t.object.lang, "en-gb");
  EXPECT_EQ(t.object.canonical(), "\"caf\xC3\xA9 \\\"x\\\"\\n\t\\\\\"@en-gb");
  t = parse("<s:1>\t<p:1>\t\"1994\"^^<http://www.w3.org/2001/XMLSchema#string>\t.\t# comment");
  EXPECT_EQ(t.object.datatype, "http://www.w3.org/2001/XMLSchema#string");
  EXPECT_EQ(t.object.canonical(), "\"1994\"^^<http://www.w3.org/2001/XMLSchema#string>");
  t = parse("<s> <p> _:x.");
  EXPECT_EQ(t.object.value, "x");
  t = parse("<s> <p> \"\\U0001F600\" .");
  EXPECT_EQ(t.object.value, "\xF0\x9F\x98\x80");
  // The same text as a plain, tagged or typed literal is three different terms.
  EXPECT_NE(parse("<s> <p> \"1\" .").object.canonical(), parse("<s> <p> \"1\"@en .").object.canonical());
  EXPECT_NE(parse("<s> <p> \"1\" .").object.canonical(), parse("<s> <p> \"1\"^^<t:int> .").object.canonical());
  Triple skip;
  EXPECT_FALSE(parse_ntriples_line("", {"t.nt", 1}, skip));
  EXPECT_FALSE(parse_ntriples_line("   # only a comment", {"t.nt", 1}, skip));
}

TEST(NTriplesErrorTest, MalformedStatementsNameLineAndColumn) {
  Triple t;
  const Where w{"g.nt", 7};
  testing::expect_user_error([&] { parse_ntriples_line("<s> <p> <o>", w, t); }, {"g.nt:7:12", "expected '.'"});
  testing::expect_user_error([&] { parse_ntriples_line("\"lit\" <p> <o> .", w, t); }, {"g.nt:7:1", "subject"});
  testing::expect_user_error([&] { parse_ntriples_line("<s> _:p <o> .", w, t); }, {"g.nt:7", "predicate IRI"});
  testing::expect_user_error([&] { parse_ntriples_line("<s> <p> \"open .", w, t); }, {"g.nt:7", "never closed"});
  testing::expect_user_error([&] { parse_ntriples_line("<s> <p> \"a\\qb\" .", w, t); }, {"g.nt:7", "unknown escape '\\q'"});
  testing::expect_user_error([&] { parse_ntriples_line("<s> <p> \"\\u12G4\" .", w, t); }, {"g.nt:7", "not a hex digit"});
  testing::expect_user_error([&] { parse_ntriples_line("<s x> <p> <o> .", w, t); }, {"g.nt:7", "not allowed in an IRI"});
  testing::expect_user_error([&] { parse_ntriples_line("<s> <p> <o> . extra", w, t); }, {"g.nt:7", "after the final '.'"});
  testing::expect_user_error([&] { parse_ntriples_line("<s> <p> \"x\"^<t> .", w, t); }, {"g.nt:7", "'^^<datatype>'"});
}

struct Counts {
  int64_t iris = 0, blanks = 0, literals = 0;
};
Counts count_terms(const Dataset& ds) {
  Counts c;
  for (const auto& n : ds.node_names) {
    if (n[0] == '<') ++c.iris;
    else if (n[0] == '_') ++c.blanks;
    else if (n[0] == '"') ++c.literals;
  }
  return c;
}

void expect_rdf_counts(const Dataset& ds, int64_t entities, int64_t triples, int forward, int64_t train, int64_t test,
                       int64_t classes) {
  ASSERT_TRUE(ds.hetero.has_value());
  EXPECT_EQ(ds.num_nodes(), entities);
  EXPECT_EQ(ds.hetero->num_node_types(), 1);
  EXPECT_EQ(ds.hetero->node_types()[0].name, "entity");
  int fwd = 0;
  int64_t fwd_edges = 0;
  for (const auto& r : ds.hetero->relations()) {
    if (r.is_inverse) continue;
    ++fwd;
    fwd_edges += r.adj.nnz();
    EXPECT_GE(ds.hetero->find_relation("rev-" + r.name), 0) << r.name;
  }
  EXPECT_EQ(fwd, forward);
  EXPECT_EQ(ds.hetero->num_relations(), 2 * forward);
  EXPECT_EQ(fwd_edges, triples);
  EXPECT_EQ(ds.num_edges(), 2 * triples);  // flattened view, inverses included
  EXPECT_EQ(ds.splits.train_size(), train);
  EXPECT_EQ(ds.splits.val_size(), 0);
  EXPECT_EQ(ds.splits.test_size(), test);
  EXPECT_EQ(ds.num_labelled(), train + test);
  EXPECT_EQ(ds.num_classes, classes);
  EXPECT_EQ(ds.target_node_type, 0);
  EXPECT_EQ(ds.task, Task::NodeClassification);
}

TEST(RdfDataTest, AifbMatchesTheRgcnCounts) {
  STRATA_REQUIRE_DATA("rdf/aifb/aifb_stripped.nt.gz");
  const Dataset ds = load_rdf(testing::data_root() / "rdf/aifb", {});
  expect_rdf_counts(ds, 8285, 29043, 45, 140, 36, 4);
  const Counts c = count_terms(ds);
  EXPECT_EQ(c.iris, 2683);
  EXPECT_EQ(c.blanks, 152);
  EXPECT_EQ(c.literals, 5450);
  EXPECT_LT(ds.hetero->find_relation("http://swrc.ontoware.org/ontology#affiliation"), 0);
  EXPECT_LT(ds.hetero->find_relation("http://swrc.ontoware.org/ontology#employs"), 0);
  // Labelled entities are persons; class names are the research-group IRIs.
  const int64_t first = ds.splits.train.data<int64_t>()[0];
  EXPECT_NE(ds.node_names[first].find("Personen"), std::string::npos);
  EXPECT_NE(ds.class_names[0].find("Forschungsgruppe"), std::string::npos);
}

TEST(RdfDataTest, MutagMatchesTheRgcnCounts) {
  STRATA_REQUIRE_DATA("rdf/mutag/mutag_stripped.nt.gz");
  const Dataset ds = load_rdf(testing::data_root() / "rdf/mutag", {});
  expect_rdf_counts(ds, 23644, 74227, 23, 272, 68, 2);
  const Counts c = count_terms(ds);
  EXPECT_EQ(c.iris, 22540);
  EXPECT_EQ(c.literals, 1104);
  EXPECT_EQ(ds.class_names, (std::vector<std::string>{"0.0", "1.0"}));
  EXPECT_LT(ds.hetero->find_relation("http://dl-learner.org/carcinogenesis#isMutagenic"), 0);
}

TEST(RdfDataTest, BgsAndAmSayTheGraphFileIsMissing) {
  STRATA_REQUIRE_DATA("rdf/bgs");
  STRATA_REQUIRE_DATA("rdf/am");
  testing::expect_user_error([] { load_rdf(testing::data_root() / "rdf/bgs", {}); },
                             {"RDF graph file missing", "bgs_stripped.nt.gz", "holds only the label files",
                              "the bgs graph is not included in this data root"});
  testing::expect_user_error([] { load_rdf(testing::data_root() / "rdf/am", {}); },
                             {"RDF graph file missing", "am_stripped.nt.gz"});
}

const char* kGraph =
    "<http://x/alice> <http://x/knows> <http://x/bob> .\n"
    "<http://x/bob> <http://x/knows> <http://x/carol> .\n"
    "<http://x/alice> <http://x/name> \"Alice\"@en .\n"
    "<http://x/alice> <http://x/affiliation> <http://x/groupA> .\n"  // kept: label_toy names no target
    "<http://x/carol> <http://x/age> \"41\"^^<http://www.w3.org/2001/XMLSchema#int> .\n"
    "_:n1 <http://x/knows> <http://x/alice> .\n"
    "<http://x/alice> <http://x/knows> <http://x/bob> .\n"  // duplicate: merged
    "\n";

TEST(Rdf, BuildsTheEntityGraphLikeRgcn) {
  TempDir dir;
  dir.write_gz("toy/toy_stripped.nt.gz", kGraph);
  dir.write("toy/trainingSet.tsv", "person\tid\tlabel_toy\r\nhttp://x/alice\t1.0\tg1\r\nhttp://x/bob\t2.0\tg2\r\n");
  dir.write("toy/testSet.tsv", "id\tperson\tlabel_toy\r\n3\thttp://x/carol\tg1\r\n");
  Dataset ds = load_rdf(dir / "toy", {});
  // Every distinct subject and object is an entity, literals and blank nodes too,
  // numbered in sorted canonical order.
  EXPECT_EQ(ds.node_names, (std::vector<std::string>{"\"41\"^^<http://www.w3.org/2001/XMLSchema#int>",
                                                     "\"Alice\"@en", "<http://x/alice>", "<http://x/bob>",
                                                     "<http://x/carol>", "<http://x/groupA>", "_:n1"}));
  // affiliation is not stripped here: label_toy is not a known target column.
  EXPECT_GE(ds.hetero->find_relation("http://x/affiliation"), 0);
  const int knows = ds.hetero->find_relation("http://x/knows");
  ASSERT_GE(knows, 0);
  // alice -> bob, bob -> carol, n1 -> alice (duplicate merged); rows are objects.
  EXPECT_EQ(testing::edge_pairs(ds.hetero->relation(knows).adj),
            (std::vector<std::pair<int64_t, int64_t>>{{2, 6}, {3, 2}, {4, 3}}));
  const int rev = ds.hetero->find_relation("rev-http://x/knows");
  ASSERT_GE(rev, 0);
  EXPECT_TRUE(ds.hetero->relation(rev).is_inverse);
  EXPECT_EQ(ds.class_names, (std::vector<std::string>{"g1", "g2"}));
  EXPECT_EQ(std::vector<int64_t>(ds.splits.train.data<int64_t>(), ds.splits.train.data<int64_t>() + 2),
            (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ds.splits.test.data<int64_t>()[0], 4);
  EXPECT_EQ(ds.labels.data<int64_t>()[4], 0);
  EXPECT_EQ(ds.labels.data<int64_t>()[3], 1);
  EXPECT_EQ(ds.labels.data<int64_t>()[0], -1);
}

TEST(Rdf, StripsTargetPredicatesNamedByTheLabelColumn) {
  TempDir dir;
  dir.write("aifb-like/g.nt",
            "<http://x/p1> <http://swrc.ontoware.org/ontology#affiliation> <http://x/g> .\n"
            "<http://x/g> <http://swrc.ontoware.org/ontology#employs> <http://x/p1> .\n"
            "<http://x/p1> <http://x/knows> <http://x/p2> .\n");
  dir.write("aifb-like/trainingSet.tsv", "person\tid\tlabel_affiliation\nhttp://x/p1\t1.0\thttp://x/g\n");
  const Dataset ds = load_rdf(dir / "aifb-like", {});
  EXPECT_EQ(ds.hetero->num_relations(), 2);  // knows + rev-knows
  EXPECT_EQ(ds.num_nodes(), 2);              // the group only occurred in stripped triples
  int removed = 0;
  for (const auto& n : ds.notes) removed += n.find("removed 1 triples with the target predicate") != std::string::npos;
  EXPECT_EQ(removed, 2);
}

TEST(RdfErrorTest, LabelsNamingUnknownEntitiesAndBadFiles) {
  TempDir dir;
  dir.write_gz("a/a_stripped.nt.gz", kGraph);
  dir.write("a/trainingSet.tsv", "person\tid\tlabel_toy\r\nhttp://x/alice\t1.0\tg1\r\nhttp://x/zoe\t2.0\tg2\r\n");
  testing::expect_user_error([&] { load_rdf(dir / "a", {}); },
                             {"trainingSet.tsv:3", "entity 'http://x/zoe' is not in the graph", "a_stripped.nt.gz"});
  dir.write_gz("b/b_stripped.nt.gz", kGraph);
  dir.write("b/trainingSet.tsv", "person\tid\tlabel_toy\nhttp://x/alice\tone\tg1\n");
  testing::expect_user_error([&] { load_rdf(dir / "b", {}); }, {"trainingSet.tsv:2", "id is 'one'"});
  dir.write_gz("c/c_stripped.nt.gz", kGraph);
  dir.write("c/trainingSet.tsv", "person\tlabel_toy\nhttp://x/alice\tg1\n");
  testing::expect_user_error([&] { load_rdf(dir / "c", {}); }, {"trainingSet.tsv:1", "expected three TAB-separated columns"});
  dir.write_gz("d/d_stripped.nt.gz", std::string(kGraph) + "<http://x/a> <http://x/b> .\n");
  testing::expect_user_error([&] { load_rdf(dir / "d", {}); }, {"d_stripped.nt.gz:9", "literal"});
  dir.write_gz("e/e_stripped.nt.gz", kGraph);
  dir.write("e/trainingSet.tsv", "person\tid\tlabel_toy\nhttp://x/alice\t1\tg1\n");
  dir.write("e/testSet.tsv", "person\tid\tlabel_toy\nhttp://x/alice\t1\tg1\n");
  testing::expect_user_error([&] { load_rdf(dir / "e", {}); }, {"testSet.tsv:2", "already labelled at", "trainingSet.tsv:2"});
  dir.write("f/trainingSet.tsv", "person\tid\tlabel_toy\n");
  testing::expect_user_error([&] { load_rdf(dir / "f", {}); },
                             {"RDF graph file missing", "f_stripped.nt.gz", "which holds only the label files"});
  fs::create_directories(dir / "g");
  testing::expect_user_error([&] { load_rdf(dir / "g", {}); },
                             {"RDF graph file missing", "g_stripped.nt.gz", "which is empty"});
}

}  // namespace
}  // namespace strata::data
