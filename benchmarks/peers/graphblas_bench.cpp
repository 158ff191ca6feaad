// SuiteSparse:GraphBLAS peer (Debian's libgraphblas-dev).
//   graphblas_bench <export dir> <threads> <F,F,...> [min_repeats]
// SpMM sum:  C = A * X over PLUS_SECOND (A iso, its pattern only);
// SpMM mean: C = Â * X over PLUS_TIMES with Â = the row-normalised A (values 1/deg);
// SDDMM dot: C<struct(A)> = Y * X' over PLUS_TIMES (the masked dot-product method).
// Operands are packed without copies (GxB_Matrix_pack_CSR / _FullR); each timed call
// runs GrB_mxm and GrB_Matrix_wait(C, GrB_MATERIALIZE). Prints "ROW" lines
// (benchmarks/peers/npy.h). Not part of Strata.
extern "C" {
#include <GraphBLAS.h>
}

#include "npy.h"

using namespace peers;

#define OK(x)                                                                   \
  do {                                                                          \
    GrB_Info info_ = (x);                                                       \
    if (info_ != GrB_SUCCESS) {                                                 \
      std::fprintf(stderr, "GraphBLAS error %d at %s:%d\n", (int)info_, __FILE__, __LINE__); \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

namespace {

// A packed CSR matrix of the export's pattern; iso value 1 or values 1/deg.
GrB_Matrix make_adj(const Npy& ip, const std::vector<int64_t>& idx, int64_t rows, int64_t cols, bool mean) {
  const int64_t nnz = (int64_t)idx.size();
  GrB_Matrix A;
  OK(GrB_Matrix_new(&A, GrB_FP32, rows, cols));
  GrB_Index* Ap = (GrB_Index*)std::malloc((rows + 1) * sizeof(GrB_Index));
  GrB_Index* Aj = (GrB_Index*)std::malloc(std::max<int64_t>(nnz, 1) * sizeof(GrB_Index));
  for (int64_t i = 0; i <= rows; ++i) Ap[i] = (GrB_Index)ip.as<int64_t>()[i];
  for (int64_t p = 0; p < nnz; ++p) Aj[p] = (GrB_Index)idx[p];
  const int64_t nx = mean ? std::max<int64_t>(nnz, 1) : 1;
  float* Ax = (float*)std::malloc(nx * sizeof(float));
  if (mean) {
    for (int64_t i = 0; i < rows; ++i)
      for (GrB_Index p = Ap[i]; p < Ap[i + 1]; ++p) Ax[p] = 1.0f / float(Ap[i + 1] - Ap[i]);
  } else {
    Ax[0] = 1.0f;
  }
  bool sorted = true;
  for (int64_t i = 0; i < rows && sorted; ++i)
    for (GrB_Index p = Ap[i] + 1; p < Ap[i + 1]; ++p)
      if (Aj[p] <= Aj[p - 1]) { sorted = false; break; }
  OK(GxB_Matrix_pack_CSR(A, &Ap, &Aj, (void**)&Ax, (rows + 1) * sizeof(GrB_Index),
                         std::max<int64_t>(nnz, 1) * sizeof(GrB_Index), nx * sizeof(float), !mean, !sorted, nullptr));
  return A;
}

// A dense row-major matrix holding a copy of the data (GraphBLAS owns it).
GrB_Matrix make_full(const Npy& X) {
  const int64_t n = X.shape[0], F = X.shape[1];
  GrB_Matrix M;
  OK(GrB_Matrix_new(&M, GrB_FP32, n, F));
  float* x = (float*)std::malloc(std::max<int64_t>(n * F, 1) * sizeof(float));
  std::memcpy(x, X.data.data(), n * F * sizeof(float));
  OK(GxB_Matrix_pack_FullR(M, (void**)&x, std::max<int64_t>(n * F, 1) * sizeof(float), false, nullptr));
  return M;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: graphblas_bench DIR THREADS F,F,... [MIN_REPEATS]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int threads = std::atoi(argv[2]);
  const int min_rep = argc > 4 ? std::atoi(argv[4]) : 10;
  std::vector<int64_t> feats;
  for (char* s = std::strtok(argv[3], ","); s; s = std::strtok(nullptr, ",")) feats.push_back(std::atoll(s));
  OK(GrB_init(GrB_NONBLOCKING));
  OK(GxB_Global_Option_set(GxB_GLOBAL_NTHREADS, threads));
  std::printf("VERSION\t%d.%d.%d\n", GxB_IMPLEMENTATION_MAJOR, GxB_IMPLEMENTATION_MINOR, GxB_IMPLEMENTATION_SUB);

  const Npy ip = load_npy(dir + "/indptr.npy");
  const std::vector<int64_t> idx = load_indices(dir + "/indices.npy");
  const int64_t rows = ip.numel() - 1, nnz = (int64_t)idx.size();
  for (int64_t F : feats) {
    const std::string f = std::to_string(F);
    const Npy Xn = load_npy(dir + "/x_F" + f + ".npy");
    const Npy Yn = load_npy(dir + "/y_F" + f + ".npy");
    const int64_t cols = Xn.shape[0];
    GrB_Matrix X = make_full(Xn), Y = make_full(Yn);
    for (const char* op : {"spmm_sum", "spmm_mean", "sddmm_dot"}) {
      const bool mean = std::strcmp(op, "spmm_mean") == 0, sddmm = std::strcmp(op, "sddmm_dot") == 0;
      const Npy want = load_npy(dir + "/ref_" + std::string(op) + "_F" + f + ".npy");
      GrB_Matrix A = make_adj(ip, idx, rows, cols, mean);
      GrB_Matrix C;
      OK(GrB_Matrix_new(&C, GrB_FP32, rows, sddmm ? cols : F));
      auto run = [&] {
        if (sddmm) OK(GrB_mxm(C, A, nullptr, GrB_PLUS_TIMES_SEMIRING_FP32, Y, X, GrB_DESC_ST1));
        else OK(GrB_mxm(C, nullptr, nullptr, mean ? GrB_PLUS_TIMES_SEMIRING_FP32 : GxB_PLUS_SECOND_FP32, A, X, nullptr));
        OK(GrB_Matrix_wait(C, GrB_MATERIALIZE));
      };
      run();
      GrB_Index nv = 0;
      OK(GrB_Matrix_nvals(&nv, C));
      std::vector<GrB_Index> I(nv), J(nv);
      std::vector<float> V(nv);
      OK(GrB_Matrix_extractTuples_FP32(I.data(), J.data(), V.data(), &nv, C));
      std::vector<float> got(sddmm ? nnz : rows * F, 0.0f);
      std::string bad;
      for (GrB_Index t = 0; t < nv && bad.empty(); ++t) {
        if (!sddmm) {
          got[I[t] * F + J[t]] = V[t];
          continue;
        }
        int64_t p = ip.as<int64_t>()[I[t]], e = ip.as<int64_t>()[I[t] + 1];
        while (p < e && idx[p] != (int64_t)J[t]) ++p;
        if (p == e) bad = "MISMATCH an output entry outside the pattern";
        else got[p] = V[t];
      }
      if (bad.empty()) bad = check_close(got.data(), want.as<float>(), (int64_t)got.size());
      if (!bad.empty()) emit("GrB_mxm", op, F, 0, bad);
      else emit("GrB_mxm", op, F, time_ms(run, min_rep), "ok",
                sddmm ? "C<struct(A)> = Y*X', PLUS_TIMES" : mean ? "values 1/deg, PLUS_TIMES" : "PLUS_SECOND");
      GrB_Matrix_free(&C);
      GrB_Matrix_free(&A);
    }
    GrB_Matrix_free(&X);
    GrB_Matrix_free(&Y);
  }
  GrB_finalize();
  return 0;
}
