// strata_bench_rgcn: R-GCN inference time (2 layers, F -> F -> F, each layer
// Y = Σ_r A_r X W_r + X W_self, relu between, normalisation 1/|N_r(i)|) with
//   tuned      the compiler's RGMS kernels, order chosen per (graph, F) by tune_rgms;
//   fused      the same kernels with the default order (no tuning);
//   per-rel    the loop DGL and PyG run (PyG's RGCNConv): for every relation one
//              generated SpMM (A_r X over all rows) and one dense matmul (Eigen) with W_r;
//   reference  the plain reference loops (sc::reference_rgms), single-threaded.
// Graphs: aifb, mutag (RDF), acm, dblp (HGB), flattened into one id space, and a
// synthetic heterograph `syn` with 50 relations over 100,000 nodes and 20,000 uniform
// random edges per relation (1,000,000 edges). Every variant is checked against the
// reference on the same inputs, then timed in one process: the compiled variants
// interleaved after warm-up (A B C, B C A, C A B, ...; each timed call preceded by an
// untimed call of the same variant), the reference after them; medians are reported.
//
//   strata_bench_rgcn [--graphs aifb,mutag,acm,dblp,syn] [--feat 32,64] [--repeats 7]
//                     [--warmup 2] [--reference-repeats 3] [--syn-repeats 3] [--threads 0]
//                     [--data-root DIR] [--json FILE]
// Dense products (W_r, W_self) run as one single-threaded Eigen GEMM per block of
// rows per thread in every variant.
#include <omp.h>

#include <CLI/CLI.hpp>
#include <Eigen/Core>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "core/timer.h"
#include "datasets/load.h"
#include "layers/relational_ops.h"
#include "sparse_compiler/ops/rgms.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/tune/rgms_tuner.h"

using namespace strata;
using json = nlohmann::ordered_json;

namespace {

sc::RelationalGraph synthetic(int64_t n, int rels, int64_t per_rel, uint64_t seed) {
  Rng rng(seed);
  std::vector<Graph> g;
  for (int r = 0; r < rels; ++r) {
    std::vector<int64_t> rows(static_cast<size_t>(per_rel)), cols(static_cast<size_t>(per_rel));
    for (int64_t e = 0; e < per_rel; ++e) {
      rows[e] = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
      cols[e] = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
    }
    CooOptions o;
    o.duplicates = DuplicatePolicy::KeepFirst;
    g.push_back(Graph::from_coo(n, n, Tensor::from_vector(rows), Tensor::from_vector(cols), o));
  }
  return sc::RelationalGraph::build(n, n, g, sc::RgmsNormalization::RightByRelation);
}

// Y += A · B with one block of rows per thread, each a single-threaded Eigen GEMM (as
// the training ops do: Eigen's own threaded GEMM spin-waits between blocks and is
// many times slower on a loaded machine).
void gemm_acc(const Tensor& A, const Tensor& B, Tensor& Y) {
  const int64_t n = A.dim(0);
  const auto a = A.as_matrix<float>();
  const auto b = B.as_matrix<float>();
  auto y = Y.as_matrix<float>();
#pragma omp parallel if (n * A.dim(1) * B.dim(1) >= (int64_t{1} << 22))
  {
    const int64_t T = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t r0 = n * t / T, r1 = n * (t + 1) / T;
    y.middleRows(r0, r1 - r0).noalias() += a.middleRows(r0, r1 - r0) * b;
  }
}

// Y = relu?(Σ_r A_r X W_r + X W_self) for one layer, given the relational part.
void add_self(const Tensor& X, const Tensor& Ws, Tensor& Y, bool relu) {
  gemm_acc(X, Ws, Y);
  if (relu) {
    float* p = Y.data<float>();
    for (int64_t i = 0; i < Y.numel(); ++i) p[i] = p[i] > 0.0f ? p[i] : 0.0f;
  }
}

struct Variant {
  std::string name;
  std::function<void(const Tensor&, Tensor&)> layer0, layer1;  // X -> Y
  std::vector<double> times;
  double setup_ms = 0;
  std::string note;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"R-GCN inference: tuned RGMS kernels vs a per-relation loop vs the reference"};
  std::string graphs = "aifb,mutag,acm,dblp,syn", feats = "32,64", data_root, json_file;
  int repeats = 7, warmup = 2, ref_repeats = 3, syn_repeats = 3, threads = 0;
  app.add_option("--graphs", graphs, "comma-separated: aifb, mutag, acm, dblp (data root) and syn (synthetic)")
      ->capture_default_str();
  app.add_option("--feat", feats, "comma-separated feature sizes F (each layer F -> F)")->capture_default_str();
  app.add_option("--repeats", repeats, "timed repeats per variant (medians reported)")->capture_default_str();
  app.add_option("--warmup", warmup, "untimed rounds before the timed ones")->capture_default_str();
  app.add_option("--reference-repeats", ref_repeats, "timed repeats of the (slow) reference loops")
      ->capture_default_str();
  app.add_option("--syn-repeats", syn_repeats, "repeats on the synthetic graph (its per-relation loop takes seconds)")
      ->capture_default_str();
  app.add_option("--threads", threads, "threads (0: all cores)")->capture_default_str();
  app.add_option("--data-root", data_root, "dataset folder (default: $STRATA_DATA_ROOT, else ../shared/datasets)");
  app.add_option("--json", json_file, "also write every row, with all timed runs, to this JSON file");
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) set_num_threads(threads);
  Eigen::setNbThreads(1);  // threads come from gemm_acc's row blocks
  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    size_t b = 0;
    while (b <= s.size()) {
      const size_t e = s.find(',', b);
      out.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
      if (e == std::string::npos) break;
      b = e + 1;
    }
    return out;
  };
  std::printf("strata_bench_rgcn: %d thread(s); 2-layer R-GCN inference F -> F -> F; median of %d (reference %d) after "
              "%d warm-up\n",
              num_threads(), repeats, ref_repeats, warmup);
  std::printf("%-6s %4s %9s %9s %5s | %10s %10s %10s %10s | %8s %8s | %s\n", "graph", "F", "nodes", "edges", "rels",
              "tuned ms", "fused ms", "per-rel ms", "ref ms", "vs loop", "vs ref", "tuned order (both layers), tune ms");
  json results = json::array();
  for (const std::string& gname : split(graphs)) {
    sc::RelationalGraph g;
    if (gname == "syn") {
      g = synthetic(100000, 50, 20000, 1);
    } else {
      data::LoadOptions lo;
      if (!data_root.empty()) lo.data_root = data_root;
      data::Dataset ds;
      try {
        ds = data::load_dataset(gname, lo);
      } catch (const std::exception& e) {
        std::printf("%-6s skipped: %s\n", gname.c_str(), e.what());
        continue;
      }
      if (!ds.is_hetero()) {
        std::printf("%-6s skipped: not a heterograph\n", gname.c_str());
        continue;
      }
      g = sc::RelationalGraph::from_hetero(*ds.hetero, sc::RgmsNormalization::RightByRelation);
    }
    const std::vector<Graph> rel_graphs = g.relation_graphs();
    for (const std::string& fs : split(feats)) {
      const int64_t F = std::stoll(fs);
      Rng rng(7);
      const Tensor X = Tensor::uniform({g.cols, F}, -1, 1, rng);
      Tensor W[2], Ws[2];
      for (int l = 0; l < 2; ++l) {
        W[l] = Tensor::uniform({g.relations, F, F}, -0.3, 0.3, rng);
        Ws[l] = Tensor::uniform({F, F}, -0.3, 0.3, rng);
      }
      const sc::RgmsSpec spec{F, F, g.index_dtype};
      std::vector<Variant> vs;
      // tuned
      {
        Timer t;
        const sc::RgmsTuneResult tr = sc::tune_rgms(g, spec);
        auto k = std::make_shared<sc::RgmsKernels>(g, spec, tr.chosen);
        Variant v{"tuned", {}, {}, {}, 0, ""};
        for (int l = 0; l < 2; ++l) {
          auto fn = [k, Wl = W[l], Wsl = Ws[l], l](const Tensor& x, Tensor& y) {
            k->forward(x, Wl, y);
            add_self(x, Wsl, y, l == 0);
          };
          (l == 0 ? v.layer0 : v.layer1) = fn;
        }
        v.setup_ms = t.ms();
        v.note = fmt::format("{}{} {:.0f}", sc::rgms_order_name(tr.chosen), tr.from_record ? " (record)" : "", tr.tune_ms);
        // What the tuner measured (one layer), so a pick the end-to-end timing
        // disagrees with can be told from noise.
        std::string seen;
        for (const auto& [order, ms] : tr.measured_ms)
          seen += fmt::format("{}{} {:.1f}", seen.empty() ? "" : ", ", sc::rgms_order_name(order), ms);
        if (!seen.empty()) v.note += " [" + seen + "]";
        vs.push_back(std::move(v));
      }
      // fused (default order, no tuning)
      {
        Timer t;
        auto k = std::make_shared<sc::RgmsKernels>(g, spec, sc::RgmsOrder::Fused);
        Variant v{"fused", {}, {}, {}, 0, ""};
        for (int l = 0; l < 2; ++l)
          (l == 0 ? v.layer0 : v.layer1) = [k, Wl = W[l], Wsl = Ws[l], l](const Tensor& x, Tensor& y) {
            k->forward(x, Wl, y);
            add_self(x, Wsl, y, l == 0);
          };
        v.setup_ms = t.ms();
        vs.push_back(std::move(v));
      }
      // per-relation loop: one generated SpMM + one matmul per relation.
      {
        Timer t;
        auto ks = std::make_shared<std::vector<std::unique_ptr<sc::SpmmKernel>>>();
        for (const Graph& A : rel_graphs) {
          sc::SpmmOptions o;
          o.feat = F;
          o.weighted = true;
          ks->push_back(std::make_unique<sc::SpmmKernel>(A, o));
        }
        auto H = std::make_shared<Tensor>(Tensor::empty({g.rows, F}, DType::F32));
        Variant v{"per-rel", {}, {}, {}, 0, ""};
        for (int l = 0; l < 2; ++l)
          (l == 0 ? v.layer0 : v.layer1) = [ks, H, Wl = W[l], Wsl = Ws[l], l, F](const Tensor& x, Tensor& y) {
            auto ym = y.as_matrix<float>();
            ym.setZero();
            const int64_t R = Wl.dim(0);
            for (int64_t r = 0; r < R; ++r) {
              (*ks)[r]->run_into(x, *H);
              gemm_acc(*H, Wl.reshape({R * F, F}).slice_rows(r * F, (r + 1) * F), y);
            }
            add_self(x, Wsl, y, l == 0);
          };
        v.setup_ms = t.ms();
        vs.push_back(std::move(v));
      }
      // reference loops
      {
        Variant v{"reference", {}, {}, {}, 0, ""};
        for (int l = 0; l < 2; ++l)
          (l == 0 ? v.layer0 : v.layer1) = [&g, Wl = W[l], Wsl = Ws[l], l](const Tensor& x, Tensor& y) {
            sc::reference_rgms(g, x, Wl, y);
            add_self(x, Wsl, y, l == 0);
          };
        vs.push_back(std::move(v));
      }
      // Check every variant against the reference, then time interleaved.
      Tensor H1 = Tensor::empty({g.rows, F}, DType::F32), Y = Tensor::empty({g.rows, F}, DType::F32);
      std::vector<Tensor> outs;
      for (Variant& v : vs) {
        v.layer0(X, H1);
        v.layer1(H1, Y);
        outs.push_back(Y.clone());
      }
      bool ok = true;
      for (size_t i = 0; i + 1 < vs.size(); ++i) {
        const CloseReport rep = all_close(outs[i], outs.back(), 1e-3, 1e-3);
        if (!rep.ok) {
          std::printf("%-6s F=%lld: %s differs from the reference: %s\n", gname.c_str(), static_cast<long long>(F),
                      vs[i].name.c_str(), rep.str().c_str());
          ok = false;
        }
      }
      const int reps = gname == "syn" ? syn_repeats : repeats;
      // The compiled variants are timed interleaved, each timed call right after an
      // untimed one of the same variant, so every variant starts from its own data in
      // cache (a variant that ran after the per-relation loop, which sweeps the cache,
      // measured up to 30% slower than the same kernels run after another variant).
      // The (single-threaded, 40-50x slower) reference runs afterwards, on its own.
      const size_t fast = vs.size() - 1;
      auto call = [&](Variant& v) {
        v.layer0(X, H1);
        v.layer1(H1, Y);
      };
      for (int it = 0; it < warmup + reps; ++it)
        for (size_t step = 0; step < fast; ++step) {
          Variant& v = vs[(step + static_cast<size_t>(it)) % fast];
          call(v);
          Timer t;
          call(v);
          if (it >= warmup) v.times.push_back(t.ms());
        }
      for (int it = 0; it < ref_repeats; ++it) {
        Timer t;
        call(vs.back());
        vs.back().times.push_back(t.ms());
      }
      double med[4];
      for (size_t i = 0; i < vs.size(); ++i) med[i] = median(vs[i].times);
      std::printf("%-6s %4lld %9lld %9lld %5lld | %10.3f %10.3f %10.3f %10.1f | %7.2fx %7.1fx | %s%s\n", gname.c_str(),
                  static_cast<long long>(F), static_cast<long long>(g.rows), static_cast<long long>(g.nnz),
                  static_cast<long long>(g.relations), med[0], med[1], med[2], med[3], med[2] / med[0],
                  med[3] / med[0], vs[0].note.c_str(), ok ? "" : "  (CHECK FAILED)");
      std::fflush(stdout);
      json row = {{"graph", gname}, {"feat", F}, {"nodes", g.rows}, {"edges", g.nnz}, {"relations", g.relations},
                  {"pairs", g.pairs}, {"threads", num_threads()}, {"checked", ok}, {"tuned_order", vs[0].note}};
      for (const Variant& v : vs) row[v.name] = {{"median_ms", median(v.times)}, {"runs", v.times}, {"setup_ms", v.setup_ms}};
      row["speedup_vs_per_relation"] = med[2] / med[0];
      row["speedup_vs_reference"] = med[3] / med[0];
      results.push_back(row);
    }
  }
  if (!json_file.empty()) {
    try {
      write_file_atomic(json_file, results.dump(2) + "\n");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "strata_bench_rgcn: --json: %s\n", e.what());
      return 1;
    }
  }
  return 0;
}
