// strata_bench_gpu: generated CUDA SpMM and SDDMM against cuSPARSE, on real graphs
// and an R-MAT graph, and a self-check of every kernel against a CPU reference.
//
//   strata_bench_gpu --data DIR [--graphs all|name,...] [--feats 32,64,128,256,512]
//                    [--runs 100] [--warmup 10] [--tune 1] [--rmat-scale 20]
//                    [--rmat-edge-factor 8] [--ops spmm,sddmm] [--device 0]
//   strata_bench_gpu --check --data DIR [...]      PASS/FAIL per kernel, exit 1 on a failure
//   strata_bench_gpu --load-only --data DIR [...]  read the graphs and print their sizes (no GPU)
//   strata_bench_gpu --compile-only 90 [...]       fill the kernel cache for sm_90 (NVRTC, no GPU)
//   [--compile-units N]                            NVRTC units per candidate batch (default: cores)
//
// Timing follows the SparseTIR artifact (sparsetir-reference.md §4): warm-ups, then
// `runs` timed launches, each preceded by writing a 256 MB buffer so L2 starts cold,
// CUDA events around the kernel only (the flush, queued first, also hides the host's
// launch overhead), and the median reported. The generated kernel is the best of its
// candidates (--tune 1): CSR under a small grid of GPU schedule knobs, plus three hyb
// decompositions for SpMM and dcsr for SDDMM under their formats' knob spaces, each
// screened with 10 runs (--tune 0: CSR with the default knobs); cuSPARSE runs its default SpMM algorithm and
// the best of CSR ALG1/ALG2/ALG3 (SDDMM has one algorithm). Every generated result is
// compared with cuSPARSE's before it is timed.
//
// Graphs are read by a small self-contained edge-list reader (below), not the
// datasets library, so the benchmark builds in the lean configuration on a GPU
// machine without Debian's -dev packages. scripts/stage-gpu-deps.sh copies the files
// into .gpu-data/ and scripts/gpu-check.sh unpacks them into DIR with this layout:
//   cora/cora.cites  citeseer/citeseer.cites  ogbl_ddi/edge.csv  graphs/<name>/<file>
// Every graph is made undirected (both directions), without self-loops or duplicate
// edges, with compact ids (nodes that appear in no edge are dropped), as the GNN
// benchmarks of SparseTIR and DGL use them.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/cuda_driver.h"
#include "core/cuda_stream.h"
#include "core/error.h"
#include "core/graph.h"
#include "core/rng.h"
#include "core/timer.h"
#include "sparse_compiler/codegen/cuda_kernel.h"
#include "sparse_compiler/formats/gpu_format_schedule.h"
#include "sparse_compiler/ops/cuda_binding.h"
#include "sparse_compiler/ops/gpu_schedules.h"
#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"

namespace {

using namespace strata;
using namespace strata::sc;

// ---- graphs -------------------------------------------------------------------------

// The graphs the benchmark knows, by name, and their files under --data.
const std::vector<std::pair<std::string, std::string>> kGraphFiles = {
    {"cora", "cora/cora.cites"},
    {"citeseer", "citeseer/citeseer.cites"},
    {"ogbl_ddi", "ogbl_ddi/edge.csv"},
    {"deezer_hu", "graphs/deezer-HU/HU_edges.csv"},
    {"musae_facebook", "graphs/musae-facebook/facebook_edges.csv"},
    {"musae_github", "graphs/musae-github/git_edges.csv"},
    {"ca_condmat", "graphs/snap-ca-CondMat/CA-CondMat.txt"},
    {"email_enron", "graphs/snap-email-Enron/email-Enron.txt"},
    {"p2p_gnutella31", "graphs/snap-p2p-Gnutella31/p2p-Gnutella31.txt"},
    {"wiki_squirrel", "graphs/wikipedia-squirrel/squirrel_edges.csv"},
};

// A symmetric CSR graph from (u, v) pairs over compact ids [0, n).
Graph undirected_graph(int64_t n, const std::vector<int64_t>& u, const std::vector<int64_t>& v,
                       const std::string& source) {
  std::vector<int64_t> rows, cols;
  rows.reserve(2 * u.size());
  cols.reserve(2 * u.size());
  for (size_t e = 0; e < u.size(); ++e) {
    rows.push_back(u[e]);
    cols.push_back(v[e]);
    rows.push_back(v[e]);
    cols.push_back(u[e]);
  }
  CooOptions o;
  o.duplicates = DuplicatePolicy::KeepFirst;
  o.self_loops = SelfLoopPolicy::Remove;
  o.source = source;
  return Graph::from_coo(n, n, Tensor::from_vector(rows), Tensor::from_vector(cols), o);
}

// The benchmark's own edge-list reader (the datasets library has the real loaders):
// one edge per line, the first two fields separated by tabs, spaces or commas;
// lines starting with '#' or '%' are comments; a .csv file's first line is a header
// when one of its fields is not a number. Ids are arbitrary strings (Citeseer's
// are), mapped to compact integers in order of appearance.
Graph read_edge_list(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  STRATA_CHECK(in.good(), "graph {}: cannot open '{}' (run scripts/stage-gpu-deps.sh, then pass --data)", name, path);
  const bool csv = path.size() > 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
  std::unordered_map<std::string, int64_t> ids;
  std::vector<int64_t> u, v;
  auto id_of = [&](const std::string& s) {
    auto [it, inserted] = ids.emplace(s, static_cast<int64_t>(ids.size()));
    return it->second;
  };
  std::string line, a, b;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#' || line[0] == '%') continue;
    for (char& c : line)
      if (c == ',' || c == '\t') c = ' ';
    std::istringstream fields(line);
    if (!(fields >> a >> b)) STRATA_FAIL("graph {}: '{}' line {}: expected two node ids", name, path, line_no);
    if (csv && line_no == 1) {
      auto numeric = [](const std::string& s) { return s.find_first_not_of("0123456789") == std::string::npos; };
      if (!numeric(a) || !numeric(b)) continue;  // header
    }
    u.push_back(id_of(a));
    v.push_back(id_of(b));
  }
  STRATA_CHECK(!u.empty(), "graph {}: '{}' holds no edges", name, path);
  return undirected_graph(static_cast<int64_t>(ids.size()), u, v, path);
}

// R-MAT (Chakrabarti et al.) with the Graph500 probabilities a, b, c = 0.57, 0.19,
// 0.19: 2^scale nodes, edge_factor * 2^scale generated edges, then made undirected.
Graph rmat_graph(int scale, int edge_factor, uint64_t seed) {
  const int64_t n = int64_t{1} << scale, m = n * edge_factor;
  constexpr int64_t kChunks = 256;  // each chunk draws from its own stream: same graph on any thread count
  std::vector<int64_t> u(static_cast<size_t>(m)), v(static_cast<size_t>(m));
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t chunk = 0; chunk < kChunks; ++chunk) {
    Rng r_chunk = Rng(seed).fork(static_cast<uint64_t>(chunk));
    for (int64_t e = chunk * m / kChunks; e < (chunk + 1) * m / kChunks; ++e) {
      int64_t r = 0, c = 0;
      for (int level = 0; level < scale; ++level) {
        const double p = r_chunk.uniform();
        const int quadrant = p < 0.57 ? 0 : p < 0.76 ? 1 : p < 0.95 ? 2 : 3;
        r = 2 * r + (quadrant >> 1);
        c = 2 * c + (quadrant & 1);
      }
      u[static_cast<size_t>(e)] = r;
      v[static_cast<size_t>(e)] = c;
    }
  }
  return undirected_graph(n, u, v, "rmat");
}

struct NamedGraph {
  std::string name;
  Graph g;
};

std::vector<NamedGraph> load_graphs(const std::string& data, const std::vector<std::string>& names, int rmat_scale,
                                    int rmat_edge_factor) {
  std::vector<NamedGraph> out;
  for (const auto& name : names) {
    Timer t;
    Graph g;
    if (name == "rmat") {
      g = rmat_graph(rmat_scale, rmat_edge_factor, 20260101);
    } else {
      auto it = std::find_if(kGraphFiles.begin(), kGraphFiles.end(), [&](const auto& p) { return p.first == name; });
      g = read_edge_list(it != kGraphFiles.end() ? data + "/" + it->second : name, name);
    }
    std::fprintf(stderr, "loaded %-15s %9lld nodes %11lld non-zeros (max degree %lld) in %.1f s\n", name.c_str(),
                 static_cast<long long>(g.num_rows()), static_cast<long long>(g.nnz()),
                 static_cast<long long>(g.degree_stats().max), t.seconds());
    out.push_back({name == "rmat" ? fmt::format("rmat{}", rmat_scale) : name, std::move(g)});
  }
  return out;
}

// ---- timing -------------------------------------------------------------------------

class GpuTimer {
 public:
  GpuTimer(int device, int warmup, int runs)
      : device_(device), warmup_(warmup), runs_(runs), stream_(default_stream(device)), start_(device), stop_(device) {
    flush_ = Tensor::empty({int64_t{256} << 18}, DType::F32, Device::cuda(device));  // 256 MB
  }
  // Median GPU time (ms) of fn() over `runs` (default: all) launches after warm-ups
  // (default: all; screening candidates uses fewer of both).
  double median_ms(const std::function<void()>& fn, int runs = -1, int warmup = -1) {
    const CudaDriver& d = require_cuda_driver("timing");
    for (int i = 0; i < (warmup >= 0 ? warmup : warmup_); ++i) fn();
    std::vector<double> ms;
    const int n = runs > 0 ? runs : runs_;
    for (int i = 0; i < n; ++i) {
      STRATA_CU(d.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(flush_.raw_data()), static_cast<unsigned char>(i),
                                  static_cast<size_t>(flush_.nbytes()), stream_.get()));
      start_.record(stream_);
      fn();
      stop_.record(stream_);
      ms.push_back(CudaEvent::elapsed_ms(start_, stop_));
    }
    return median(ms);
  }
  int runs() const { return runs_; }

 private:
  int device_, warmup_, runs_;
  CudaStream& stream_;
  CudaEvent start_, stop_;
  Tensor flush_;
};

// Largest |a - b| relative to the largest |b| (host copies).
double relative_error(const Tensor& got, const Tensor& want) {
  const Tensor a = got.to(Device::cpu()), b = want.to(Device::cpu());
  double worst = 0, scale = 1e-30;
  for (int64_t i = 0; i < b.numel(); ++i) {
    worst = std::max(worst, std::abs(double(a.data<float>()[i]) - b.data<float>()[i]));
    scale = std::max(scale, std::abs(double(b.data<float>()[i])));
  }
  return std::isnan(worst) ? INFINITY : worst / scale;
}

// ---- the benchmark's tuning grids ---------------------------------------------------

// Candidates are screened with fewer runs; the chosen one is then timed in full.
constexpr int kScreenRuns = 10, kScreenWarmup = 3;

// A candidate: a storage format and the knobs of its GPU schedule.
template <class Knobs>
struct Candidate {
  FormatSpec format;
  Knobs knobs;
  std::string str() const {  // "r8_l32_c2_p1", or "hyb:c=1,B=4/r8_l32_c2_p1_g64"
    return format.kind == FormatKind::Csr ? knobs.str() : format.str() + "/" + knobs.str();
  }
};
using SpmmCandidate = Candidate<GpuSpmmKnobs>;
using SddmmCandidate = Candidate<GpuSddmmKnobs>;

// The decomposed formats tried besides CSR. SpMM: SparseTIR's hyb (rows bucketed by
// length, the longest split into pieces that add atomically: even work per thread
// group on power-law graphs), with one or four column parts (a part's share of X
// fits in L2 on the large graphs). SDDMM: dcsr (each group runs one row's edges).
const std::vector<std::string> kSpmmFormats = {"hyb:c=1,B=4", "hyb:c=1,B=5", "hyb:c=4,B=4"};
const std::vector<std::string> kSddmmFormats = {"dcsr"};

std::vector<SpmmCandidate> spmm_candidates(const SpmmSpec& spec, int tune) {
  const FormatSpec csr;
  std::vector<SpmmCandidate> out = {{csr, default_gpu_spmm_knobs(spec)}};
  if (tune == 0) return out;
  // Threads per row (lanes) times features per thread (coarsen), 256 threads per
  // block, and rows split into 1, 2 or 4 parts (more warps for few, long rows).
  // Narrow lane groups are tried only where a row fits in one warp.
  const int64_t F = spec.feat;
  for (int64_t cf : {1, 2, 4}) {
    if (F % cf || F / cf < 8) continue;
    for (int64_t lanes : {32, 16, 8}) {
      if (lanes > F / cf || (lanes < 32 && F / cf > 32)) continue;
      for (int64_t parts : {1, 2, 4}) {
        GpuSpmmKnobs k{256 / lanes, lanes, cf, parts, false};
        if (k.str() != out[0].knobs.str()) out.push_back({csr, k});
      }
    }
  }
  // The formats' own search spaces, atomic mode (deterministic owner tasks are for
  // reproducible sums, not speed), 256 threads per block.
  for (const auto& name : kSpmmFormats) {
    const FormatSpec format = FormatSpec::parse(name);
    for (const GpuSpmmKnobs& k : gpu_spmm_search_space(spec, format))
      if (!k.deterministic && k.rows_per_block * k.lanes >= 256) out.push_back({format, k});
  }
  return out;
}

std::vector<SddmmCandidate> sddmm_candidates(const SddmmSpec& spec, int tune) {
  const FormatSpec csr;
  std::vector<SddmmCandidate> out = {{csr, default_gpu_sddmm_knobs(spec)}};
  if (tune == 0) return out;
  std::vector<GpuSddmmKnobs> grid = {out[0].knobs};
  for (int64_t vec : {4, 2, 1}) {
    if (spec.feat % vec) continue;
    for (int64_t lanes : {32, 16, 8, 4}) {
      if (lanes * vec > spec.feat) continue;
      GpuSddmmKnobs k{256 / lanes, lanes, vec};
      if (k.str() != out[0].knobs.str()) {
        out.push_back({csr, k});
        grid.push_back(k);
      }
    }
  }
  for (const auto& name : kSddmmFormats)
    for (const auto& k : grid) out.push_back({FormatSpec::parse(name), k});
  return out;
}

// NVRTC translation units compiled at once (decomposed-format kernels take NVRTC
// about a second each, and a format's search space holds dozens): --compile-units,
// else one per core. The units are the cache's entries, so a cache filled with
// --compile-only serves a run only with the same count.
int g_compile_units = 0;
int compile_units() {
  return g_compile_units > 0 ? g_compile_units : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::vector<Kernel> lower_all(const SpmmSpec& spec, const std::vector<SpmmCandidate>& cs) {
  std::vector<Kernel> out;
  for (const auto& c : cs) out.push_back(lower_spmm_gpu(spec, c.format, c.knobs));
  return out;
}

std::vector<Kernel> lower_all(const SddmmSpec& spec, const std::vector<SddmmCandidate>& cs) {
  std::vector<Kernel> out;
  for (const auto& c : cs) out.push_back(lower_sddmm_gpu(spec, c.format, c.knobs));
  return out;
}

// Keeps the inspected formats of the graph being measured on the device, so the
// candidates of every F share one inspection per format (CudaOpBinding caches them
// while some holder lives).
class HeldFormats {
 public:
  void hold(const std::string& graph, const Graph& g, const FormatSpec& format, int64_t grain, Device dev) {
    if (graph != graph_) {
      held_.clear();
      graph_ = graph;
    }
    if (needs_inspection(format)) held_.push_back(CudaOpBinding::device_format(g, format, grain, dev));
  }

 private:
  std::string graph_;
  std::vector<std::shared_ptr<const InspectedFormat>> held_;
};

// ---- one measurement ----------------------------------------------------------------

struct Row {
  std::string graph, op, knobs, best_alg;
  int64_t F = 0;
  double generated = 0, cusparse_default = 0, cusparse_best = 0;
  bool matches = true;
};

struct Bench {
  int device = 0, tune = 1;
  GpuTimer* timer = nullptr;
  CudaTarget target;
  std::map<int64_t, std::vector<CompiledCudaKernel>> spmm_kernels, sddmm_kernels;  // per F, one per candidate
  std::map<int64_t, std::vector<SpmmCandidate>> spmm_knobs;
  std::map<int64_t, std::vector<SddmmCandidate>> sddmm_knobs;
  HeldFormats held;

  const std::vector<CompiledCudaKernel>& spmm_for(const SpmmSpec& spec) {
    auto& ks = spmm_kernels[spec.feat];
    if (ks.empty()) {
      spmm_knobs[spec.feat] = spmm_candidates(spec, tune);
      Timer wall;
      ks = compile_cuda(lower_all(spec, spmm_knobs[spec.feat]), target, compile_units());
      std::fprintf(stderr, "compiled %zu SpMM candidates for F=%lld in %d units (first: %s; %.0f ms)\n", ks.size(),
                   static_cast<long long>(spec.feat), compile_units(), to_string(ks[0].outcome), wall.ms());
    }
    return ks;
  }
  const std::vector<CompiledCudaKernel>& sddmm_for(const SddmmSpec& spec) {
    auto& ks = sddmm_kernels[spec.feat];
    if (ks.empty()) {
      sddmm_knobs[spec.feat] = sddmm_candidates(spec, tune);
      Timer wall;
      ks = compile_cuda(lower_all(spec, sddmm_knobs[spec.feat]), target, compile_units());
      std::fprintf(stderr, "compiled %zu SDDMM candidates for F=%lld in %d units (first: %s; %.0f ms)\n", ks.size(),
                   static_cast<long long>(spec.feat), compile_units(), to_string(ks[0].outcome), wall.ms());
    }
    return ks;
  }

  Row spmm(const NamedGraph& ng, int64_t F) {
    const Device dev = Device::cuda(device);
    const Graph& g = ng.g;
    Rng rng(F);
    const Tensor X = Tensor::uniform({g.num_cols(), F}, -1, 1, rng).to(dev);
    Tensor Y = Tensor::empty({g.num_rows(), F}, DType::F32, dev), Yref = Tensor::empty({g.num_rows(), F}, DType::F32, dev);
    Row row{ng.name, "spmm", "", "", F};
    SpmmOptions o;
    o.feat = F;
    o.device = dev;
    o.backend = Backend::CuSparse;
    SpmmKernel cs_default(g, o);
    SpmmPlan best_plan = SpmmKernel::default_plan(SpmmKernel::spec(g, o));
    best_plan.cusparse_algorithm = CusparseSpmmAlgorithm::Best;
    o.plan = best_plan;
    SpmmKernel cs_best(g, o);
    row.best_alg = to_string(cs_best.cusparse()->algorithm());
    cs_default.run_into(X, Yref);
    row.cusparse_default = timer->median_ms([&] { cs_default.run_into(X, Yref); });
    row.cusparse_best = timer->median_ms([&] { cs_best.run_into(X, Yref); });
    // The generated kernel: the fastest candidate, checked against cuSPARSE first.
    o.backend = Backend::Generated;
    o.plan.reset();
    const SpmmSpec spec = SpmmKernel::spec(g, o);
    const auto& kernels = spmm_for(spec);
    const SpmmPlan base = SpmmKernel::default_plan(spec);
    for (const auto& c : spmm_knobs[F])
      held.hold(ng.name, g, c.format, gpu_inspector_grain(c.format, c.knobs, base.knobs.grain), dev);
    auto kernel_for = [&](size_t i) {
      SpmmPlan plan = base;
      plan.format = spmm_knobs[F][i].format;
      plan.gpu = spmm_knobs[F][i].knobs;
      o.plan = plan;
      return SpmmKernel(g, o, kernels[i]);
    };
    double best = INFINITY;
    size_t chosen = kernels.size();
    for (size_t i = 0; i < kernels.size(); ++i) {
      SpmmKernel k = kernel_for(i);
      k.run_into(X, Y);
      if (const double err = relative_error(Y, Yref); err > 1e-4) {
        row.matches = false;
        std::fprintf(stderr, "MISMATCH: spmm %s F=%lld %s differs from cuSPARSE (relative error %.3g)\n",
                     ng.name.c_str(), static_cast<long long>(F), spmm_knobs[F][i].str().c_str(), err);
        continue;
      }
      if (kernels.size() == 1) {
        chosen = i;
        break;
      }
      const double ms = timer->median_ms([&] { k.run_into(X, Y); }, kScreenRuns, kScreenWarmup);
      if (ms < best) {
        best = ms;
        chosen = i;
      }
    }
    if (chosen == kernels.size()) return row;
    row.knobs = spmm_knobs[F][chosen].str();
    SpmmKernel k = kernel_for(chosen);
    row.generated = timer->median_ms([&] { k.run_into(X, Y); });
    return row;
  }

  Row sddmm(const NamedGraph& ng, int64_t F) {
    const Device dev = Device::cuda(device);
    const Graph& g = ng.g;
    Rng rng(F + 7);
    const Tensor X = Tensor::uniform({g.num_rows(), F}, -1, 1, rng).to(dev);
    const Tensor Y = Tensor::uniform({g.num_cols(), F}, -1, 1, rng).to(dev);
    Tensor O = Tensor::empty({g.nnz()}, DType::F32, dev), Oref = Tensor::empty({g.nnz()}, DType::F32, dev);
    Row row{ng.name, "sddmm", "", "default", F};
    SddmmOptions o;
    o.feat = F;
    o.device = dev;
    o.backend = Backend::CuSparse;
    SddmmKernel cs(g, o);
    cs.run_into(X, Y, Oref);
    row.cusparse_default = timer->median_ms([&] { cs.run_into(X, Y, Oref); });
    row.cusparse_best = row.cusparse_default;  // cuSPARSE has one SDDMM algorithm
    o.backend = Backend::Generated;
    const SddmmSpec spec = SddmmKernel::spec(g, o);
    const auto& kernels = sddmm_for(spec);
    const KernelPlan base = SddmmKernel::default_plan();
    for (const auto& c : sddmm_knobs[F]) held.hold(ng.name, g, c.format, base.knobs.grain, dev);
    auto use = [&](size_t i) {
      KernelPlan plan = base;
      plan.format = sddmm_knobs[F][i].format;
      o.plan = plan;
      o.gpu = sddmm_knobs[F][i].knobs;
    };
    double best = INFINITY;
    size_t chosen = kernels.size();
    for (size_t i = 0; i < kernels.size(); ++i) {
      use(i);
      SddmmKernel k(g, o, kernels[i]);
      k.run_into(X, Y, O);
      if (const double err = relative_error(O, Oref); err > 1e-4) {
        row.matches = false;
        std::fprintf(stderr, "MISMATCH: sddmm %s F=%lld %s differs from cuSPARSE (relative error %.3g)\n",
                     ng.name.c_str(), static_cast<long long>(F), sddmm_knobs[F][i].str().c_str(), err);
        continue;
      }
      if (kernels.size() == 1) {
        chosen = i;
        break;
      }
      const double ms = timer->median_ms([&] { k.run_into(X, Y, O); }, kScreenRuns, kScreenWarmup);
      if (ms < best) {
        best = ms;
        chosen = i;
      }
    }
    if (chosen == kernels.size()) return row;
    use(chosen);
    row.knobs = sddmm_knobs[F][chosen].str();
    SddmmKernel k(g, o, kernels[chosen]);
    row.generated = timer->median_ms([&] { k.run_into(X, Y, O); });
    return row;
  }
};

double geomean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return v.empty() ? 0 : std::exp(s / static_cast<double>(v.size()));
}

// ---- self-check ---------------------------------------------------------------------

Tensor cpu_spmm(const Graph& A, const Tensor& X, const Tensor& values, bool mean) {
  const int64_t F = X.dim(1);
  Tensor Y = Tensor::zeros({A.num_rows(), F}, DType::F32);
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < A.num_rows(); ++i) {
    std::vector<double> acc(static_cast<size_t>(F), 0.0);
    for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
      const double w = values.defined() ? values.data<float>()[p] : 1.0;
      const float* x = X.data<float>() + A.column(p) * F;
      for (int64_t f = 0; f < F; ++f) acc[f] += w * x[f];
    }
    const double s = mean ? (A.degree(i) ? 1.0 / static_cast<double>(A.degree(i)) : 0.0) : 1.0;
    for (int64_t f = 0; f < F; ++f) Y.data<float>()[i * F + f] = static_cast<float>(acc[f] * s);
  }
  return Y;
}

Tensor cpu_sddmm(const Graph& A, const Tensor& X, const Tensor& Y, bool dot) {
  const int64_t F = X.dim(1);
  Tensor O = dot ? Tensor::zeros({A.nnz()}, DType::F32) : Tensor::zeros({A.nnz(), F}, DType::F32);
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < A.num_rows(); ++i)
    for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
      const float *x = X.data<float>() + i * F, *y = Y.data<float>() + A.column(p) * F;
      if (dot) {
        double s = 0;
        for (int64_t f = 0; f < F; ++f) s += double(x[f]) * y[f];
        O.data<float>()[p] = static_cast<float>(s);
      } else {
        for (int64_t f = 0; f < F; ++f) O.data<float>()[p * F + f] = x[f] + y[f];
      }
    }
  return O;
}

int self_check(const std::vector<NamedGraph>& graphs, const std::vector<int64_t>& feats, int device, int tune) {
  const Device dev = Device::cuda(device);
  const CudaTarget target = cuda_target_for_device(device);
  int passed = 0, failed = 0;
  auto report = [&](const std::string& what, const Tensor& got, const Tensor& want) {
    const double err = relative_error(got, want);
    const bool ok = err <= 1e-4;
    (ok ? passed : failed)++;
    std::printf("%s  %-62s max relative error %.2e\n", ok ? "PASS" : "FAIL", what.c_str(), err);
    std::fflush(stdout);
  };
  // Every candidate of a (variant, F) compiled in one NVRTC batch, reused on every graph.
  std::map<std::string, std::pair<std::vector<SpmmCandidate>, std::vector<CompiledCudaKernel>>> spmm_batches;
  std::map<int64_t, std::pair<std::vector<SddmmCandidate>, std::vector<CompiledCudaKernel>>> sddmm_batches;
  for (const auto& ng : graphs) {
    Rng rng(99);
    const Graph g = ng.g.with_values(Tensor::uniform({ng.g.nnz()}, -1, 1, rng));
    for (int64_t F : feats) {
      const Tensor X = Tensor::uniform({g.num_cols(), F}, -1, 1, rng);
      const Tensor Xs = Tensor::uniform({g.num_rows(), F}, -1, 1, rng);
      const Tensor Xd = X.to(dev), Xsd = Xs.to(dev);
      const std::string where = fmt::format("{} F={}", ng.name, F);
      for (const char* variant : {"sum", "mean", "weighted"}) {
        SpmmOptions o;
        o.feat = F;
        o.device = dev;
        o.weighted = std::string(variant) == "weighted";
        o.reduce = std::string(variant) == "mean" ? Reduce::Mean : Reduce::Sum;
        const SpmmSpec spec = SpmmKernel::spec(g, o);
        auto& [knobs, kernels] = spmm_batches[spec.name()];
        if (kernels.empty()) {
          knobs = spmm_candidates(spec, tune);
          kernels = compile_cuda(lower_all(spec, knobs), target, compile_units());
        }
        const Tensor want = cpu_spmm(g, X, o.weighted ? g.values() : Tensor(), o.reduce == Reduce::Mean);
        for (size_t i = 0; i < kernels.size(); ++i) {
          SpmmPlan plan = SpmmKernel::default_plan(spec);
          plan.format = knobs[i].format;
          plan.gpu = knobs[i].knobs;
          o.plan = plan;
          report(fmt::format("spmm {} generated {} {}", variant, knobs[i].str(), where),
                 SpmmKernel(g, o, kernels[i]).run(Xd), want);
        }
        o.backend = Backend::CuSparse;
        o.plan.reset();
        report(fmt::format("spmm {} cusparse {}", variant, where), SpmmKernel(g, o).run(Xd), want);
      }
      const Tensor Y = Tensor::uniform({g.num_cols(), F}, -1, 1, rng);
      const Tensor dot = cpu_sddmm(g, Xs, Y, true), add = cpu_sddmm(g, Xs, Y, false);
      const Tensor Yd = Y.to(dev);
      SddmmOptions so;
      so.feat = F;
      so.device = dev;
      const SddmmSpec spec = SddmmKernel::spec(g, so);
      auto& [knobs, kernels] = sddmm_batches[F * 2 + (spec.index_dtype == DType::I64)];
      if (kernels.empty()) {
        knobs = sddmm_candidates(spec, tune);
        kernels = compile_cuda(lower_all(spec, knobs), target, compile_units());
      }
      for (size_t i = 0; i < kernels.size(); ++i) {
        KernelPlan plan = SddmmKernel::default_plan();
        plan.format = knobs[i].format;
        so.plan = plan;
        so.gpu = knobs[i].knobs;
        report(fmt::format("sddmm dot generated {} {}", knobs[i].str(), where), SddmmKernel(g, so, kernels[i]).run(Xsd, Yd),
               dot);
      }
      so.gpu.reset();
      so.plan.reset();
      so.kind = SddmmKind::Add;
      report(fmt::format("sddmm add generated {}", where), SddmmKernel(g, so).run(Xsd, Yd), add);
      so.kind = SddmmKind::Dot;
      so.backend = Backend::CuSparse;
      report(fmt::format("sddmm dot cusparse {}", where), SddmmKernel(g, so).run(Xsd, Yd), dot);
    }
  }
  std::printf("self-check: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

int run(int argc, char** argv) {
  CLI::App app{"strata_bench_gpu: generated CUDA SpMM/SDDMM against cuSPARSE, and a self-check"};
  std::string data = ".gpu-data", graphs_arg = "all", feats_arg, ops_arg = "spmm,sddmm";
  int runs = 100, warmup = 10, tune = 1, rmat_scale = 20, rmat_edge_factor = 8, device = 0;
  bool check = false, load_only = false;
  int compile_only = 0;
  app.add_option("--data", data, "folder with the unpacked graph files")->capture_default_str();
  app.add_option("--graphs", graphs_arg, "all, or a comma-separated list of names or edge-list files")
      ->capture_default_str();
  app.add_option("--feats", feats_arg, "feature sizes (default 32,64,128,256,512; --check: 1,17,64,128)");
  app.add_option("--ops", ops_arg, "spmm, sddmm or both")->capture_default_str();
  app.add_option("--runs", runs, "timed runs per measurement (median reported)")->capture_default_str();
  app.add_option("--warmup", warmup, "untimed runs first")->capture_default_str();
  app.add_option("--tune", tune, "1: best of a small knob grid; 0: default knobs only")->capture_default_str();
  app.add_option("--rmat-scale", rmat_scale, "R-MAT graph with 2^scale nodes")->capture_default_str();
  app.add_option("--rmat-edge-factor", rmat_edge_factor, "R-MAT edges per node before symmetrising")
      ->capture_default_str();
  app.add_option("--device", device, "CUDA device index")->capture_default_str();
  app.add_flag("--check", check, "compare every kernel with a CPU reference; PASS/FAIL lines, exit 1 on failure");
  app.add_flag("--load-only", load_only, "read (or generate) the graphs, print their sizes and stop (needs no GPU)");
  app.add_option("--compile-only", compile_only,
                 "compile the benchmark's kernels for sm_<ARCH> (90: Hopper) into the kernel cache and stop (needs no "
                 "GPU: NVRTC only)");
  app.add_option("--compile-units", g_compile_units,
                 "NVRTC translation units per candidate batch, compiled at once (default: one per core; a cache filled "
                 "by --compile-only is reused only with the same count)");
  CLI11_PARSE(app, argc, argv);

  std::vector<std::string> names;
  if (graphs_arg == "all") {
    for (const auto& [name, file] : kGraphFiles) names.push_back(name);
    names.push_back("rmat");
  } else {
    names = split(graphs_arg);
  }
  std::vector<int64_t> feats;
  for (const auto& f : split(feats_arg.empty() ? (check ? "1,17,64,128" : "32,64,128,256,512") : feats_arg))
    feats.push_back(std::stoll(f));
  if (load_only) {
    load_graphs(data, names, rmat_scale, rmat_edge_factor);
    return 0;
  }
  if (compile_only > 0) {
    // The kernels depend on the graph only through its index type: the first graph's.
    const std::vector<NamedGraph> graphs = load_graphs(data, {names.front()}, rmat_scale, rmat_edge_factor);
    Bench bench;
    bench.tune = tune;
    bench.target = CudaTarget{compile_only, true};
    for (int64_t F : feats) {
      SpmmOptions so;
      so.feat = F;
      bench.spmm_for(SpmmKernel::spec(graphs.front().g, so));
      SddmmOptions sd;
      sd.feat = F;
      bench.sddmm_for(SddmmKernel::spec(graphs.front().g, sd));
    }
    return 0;
  }
  require_cuda_backend("strata_bench_gpu", Device::cuda(device));
  const CudaDriver& d = require_cuda_driver("strata_bench_gpu");
  char device_name[256] = {0};
  CUdevice cu_dev;
  STRATA_CU(d.cuDeviceGet(&cu_dev, device));
  STRATA_CU(d.cuDeviceGetName(device_name, sizeof device_name, cu_dev));
  const CudaTarget target = cuda_target_for_device(device);
  std::printf("device cuda:%d %s, kernels built for %s\n", device, device_name, target.str().c_str());
  Timer total;
  const std::vector<NamedGraph> graphs = load_graphs(data, names, rmat_scale, rmat_edge_factor);
  if (check) return self_check(graphs, feats, device, tune);

  GpuTimer timer(device, warmup, runs);
  Bench bench;
  bench.device = device;
  bench.tune = tune;
  bench.timer = &timer;
  bench.target = target;
  const std::vector<std::string> ops = split(ops_arg);
  std::vector<Row> rows;
  std::printf("%-15s %-6s %5s %12s %12s %12s %-9s %8s  %s\n", "graph", "op", "F", "generated ms", "cusparse ms",
              "best ms", "best alg", "speedup", "generated knobs");
  for (const auto& ng : graphs)
    for (const auto& op : ops)
      for (int64_t F : feats) {
        Row r = op == "spmm" ? bench.spmm(ng, F) : bench.sddmm(ng, F);
        std::printf("%-15s %-6s %5lld %12.4f %12.4f %12.4f %-9s %7.2fx  %s%s\n", r.graph.c_str(), r.op.c_str(),
                    static_cast<long long>(r.F), r.generated, r.cusparse_default, r.cusparse_best, r.best_alg.c_str(),
                    r.generated > 0 ? r.cusparse_best / r.generated : 0.0, r.knobs.c_str(),
                    r.matches ? "" : "  (some candidates MISMATCHED)");
        std::fflush(stdout);
        rows.push_back(r);
      }
  std::printf("\ngeomean over F of best-cuSPARSE / generated time (goal: >= 1.2 per graph and op)\n");
  std::printf("%-15s", "graph");
  for (const auto& op : ops) std::printf(" %9s", op.c_str());
  std::printf("\n");
  bool goal = true;
  for (const auto& ng : graphs) {
    std::printf("%-15s", ng.name.c_str());
    for (const auto& op : ops) {
      std::vector<double> s;
      for (const auto& r : rows)
        if (r.graph == ng.name && r.op == op && r.generated > 0) s.push_back(r.cusparse_best / r.generated);
      const double gm = geomean(s);
      goal &= gm >= 1.2;
      std::printf(" %8.2fx", gm);
    }
    std::printf("\n");
  }
  std::printf("goal %s; %zu measurements in %.0f s\n", goal ? "met" : "NOT met", rows.size(), total.seconds());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata_bench_gpu: %s\n", e.what());
    return 1;
  }
}
