// Plain edge lists, one edge `<src> <dst> [weight]` per line (edge src -> dst):
//  - Blank-separated (SNAP .txt/.txt.gz): fields split at runs of TABs/spaces; lines
//    starting with '#' or '%' are comments. A SNAP header line "# Nodes: N Edges: M"
//    is checked against what was read (a truncated file is caught).
//  - CSV (MUSAE, Deezer, ...): comma-separated; an optional header line (its first
//    field is not a number) names the columns.
// Any line ending (LF, CRLF, CR) and a missing final newline are accepted; .gz is
// recognised by its magic bytes.
//
// Node ids: when the ids used are exactly 0..N-1 they are kept; otherwise they are
// renumbered in ascending order (Dataset::original_ids keeps the file's ids).
// Duplicate edges and self-loops are kept as records.
#pragma once

#include "datasets/dataset.h"
#include "datasets/source_options.h"

namespace strata::data {

enum class EdgeListStyle : uint8_t { Blank, Csv };

// The records of an edge-list file, before nodes are numbered.
struct EdgeRecords {
  std::string file;
  std::vector<int64_t> src, dst;
  std::vector<float> weights;        // empty unless every record has a third column
  std::vector<int64_t> lines;        // line of each record, for messages
  std::vector<std::string> header;   // CSV column names, if there was a header
  std::optional<int64_t> header_nodes, header_edges;  // from a SNAP "# Nodes: N Edges: M" line
};

EdgeRecords read_edge_records(const fs::path& path, EdgeListStyle style);

Dataset load_edge_list(const fs::path& path, EdgeListStyle style, const SourceOptions& options);

}  // namespace strata::data
