// Pubmed-Diabetes in the LINQS .tab layout: a folder holding
//   Pubmed-Diabetes.DIRECTED.cites.tab  header lines (DIRECTED / NO_FEATURES), then
//                                       `<edge_id> TAB paper:<a> TAB | TAB paper:<b>` (edge a -> b)
//   Pubmed-Diabetes.NODE.paper.tab      optional: `NODE TAB paper`, a schema line
//                                       (`cat=1,2,3:label TAB numeric:w-xxx:0.0 ... TAB string:summary`),
//                                       then `<pmid> TAB label=N TAB w-xxx=0.01 ... TAB summary=...`
//   Pubmed-Diabetes.GRAPH.pubmed.tab    header only (not needed)
// Without the NODE file the dataset is structure only, with a note saying so.
// Nodes follow NODE-file order (or first appearance in the cites file).
#pragma once

#include "datasets/dataset.h"
#include "datasets/source_options.h"

namespace strata::data {

Dataset load_pubmed(const fs::path& folder, const SourceOptions& options);

}  // namespace strata::data
