// RDF entity-classification datasets as R-GCN uses them (AIFB, MUTAG, BGS, AM): a
// folder holding `<name>_stripped.nt.gz` (N-Triples, .nt or .nt.gz) and the label
// files `trainingSet*.tsv` / `testSet*.tsv` (header row; columns `id` (a float such
// as 2.0), the entity IRI column and a `label_*` column, in any order; CRLF or LF).
//
// The graph is built the way R-GCN builds it: every distinct subject and object
// (IRIs, blank nodes and literals alike) is a node of one node type "entity"; each
// predicate is a relation (rows = objects, columns = subjects, so messages flow
// subject -> object), and each gets an inverse "rev-<predicate>". Triples whose
// predicate is the target relation (AIFB affiliation/employs, MUTAG isMutagenic,
// BGS hasLithogenesis, AM objectCategory/material) are removed, although the
// distributed files are already stripped. Entity ids follow the sorted canonical
// N-Triples text of the terms and relations the sorted predicate IRIs, so ids do not
// depend on triple order. Duplicate triples (a set, in RDF) are merged.
//
// DGL's RDF datasets differ on purpose: they type nodes by IRI prefix, give
// literals the type "_Literal" and drop blank nodes (AIFB: 7,262 nodes and 48,810
// edges with reverses, where R-GCN and Strata have 8,285 nodes), so node counts and
// ids do not match DGL's; the labelled entities are the same.
#pragma once

#include "datasets/dataset.h"
#include "datasets/source_options.h"

namespace strata::data {

// `path` is the dataset folder or the .nt/.nt.gz file (labels are then looked for
// beside it).
Dataset load_rdf(const fs::path& path, const SourceOptions& options);

}  // namespace strata::data
