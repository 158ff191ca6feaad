// Intel MKL sparse BLAS (inspector-executor) peer: mkl_sparse_s_mm on CSR, row-major
// dense operands, with the mm hint and mkl_sparse_optimize done before timing, as
// MKL's documentation recommends for repeated products.
//   mkl_bench <export dir> <threads> <F,F,...> [min_repeats]
// SpMM sum uses values 1; SpMM mean uses values 1/deg(row) (the row-normalised
// adjacency, how an MKL user computes a mean). MKL's C API has no SDDMM: that row is
// reported as n/a. Prints "ROW" lines (benchmarks/peers/npy.h). Not part of Strata.
#include <mkl.h>

#include "npy.h"

using namespace peers;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: mkl_bench DIR THREADS F,F,... [MIN_REPEATS]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int threads = std::atoi(argv[2]);
  const int min_rep = argc > 4 ? std::atoi(argv[4]) : 10;
  std::vector<int64_t> feats;
  for (char* s = std::strtok(argv[3], ","); s; s = std::strtok(nullptr, ",")) feats.push_back(std::atoll(s));
  mkl_set_num_threads(threads);
  char ver[256];
  mkl_get_version_string(ver, sizeof ver);
  std::printf("VERSION\t%s\n", ver);

  const Npy ip = load_npy(dir + "/indptr.npy");
  const std::vector<int64_t> idx = load_indices(dir + "/indices.npy");
  const int64_t rows = ip.numel() - 1, nnz = (int64_t)idx.size();
  if (nnz >= (int64_t(1) << 31)) {
    for (int64_t F : feats) emit("mkl_sparse_s_mm", "spmm_sum", F, 0, "n/a", "nnz needs ILP64");
    return 0;
  }
  std::vector<MKL_INT> ptr(rows + 1), col(nnz);
  for (int64_t i = 0; i <= rows; ++i) ptr[i] = (MKL_INT)ip.as<int64_t>()[i];
  for (int64_t p = 0; p < nnz; ++p) col[p] = (MKL_INT)idx[p];
  std::vector<float> ones(nnz, 1.0f), inv(nnz);
  for (int64_t i = 0; i < rows; ++i)
    for (MKL_INT p = ptr[i]; p < ptr[i + 1]; ++p) inv[p] = 1.0f / float(ptr[i + 1] - ptr[i]);

  for (int64_t F : feats) {
    const std::string f = std::to_string(F);
    const Npy X = load_npy(dir + "/x_F" + f + ".npy");
    const int64_t cols = X.shape[0];
    for (const char* op : {"spmm_sum", "spmm_mean"}) {
      const bool mean = std::strcmp(op, "spmm_mean") == 0;
      const Npy want = load_npy(dir + "/ref_" + std::string(op) + "_F" + f + ".npy");
      sparse_matrix_t A;
      std::vector<float>& vals = mean ? inv : ones;
      if (mkl_sparse_s_create_csr(&A, SPARSE_INDEX_BASE_ZERO, (MKL_INT)rows, (MKL_INT)cols, ptr.data(), ptr.data() + 1,
                                  col.data(), vals.data()) != SPARSE_STATUS_SUCCESS) {
        emit("mkl_sparse_s_mm", op, F, 0, "error", "mkl_sparse_s_create_csr failed");
        continue;
      }
      matrix_descr d;
      d.type = SPARSE_MATRIX_TYPE_GENERAL;
      mkl_sparse_set_mm_hint(A, SPARSE_OPERATION_NON_TRANSPOSE, d, SPARSE_LAYOUT_ROW_MAJOR, (MKL_INT)F, 100000);
      mkl_sparse_optimize(A);
      std::vector<float> Y(rows * F, 0.0f);
      auto run = [&] {
        mkl_sparse_s_mm(SPARSE_OPERATION_NON_TRANSPOSE, 1.0f, A, d, SPARSE_LAYOUT_ROW_MAJOR, X.as<float>(), (MKL_INT)F,
                        (MKL_INT)F, 0.0f, Y.data(), (MKL_INT)F);
      };
      run();
      const std::string bad = check_close(Y.data(), want.as<float>(), rows * F);
      if (!bad.empty()) emit("mkl_sparse_s_mm", op, F, 0, bad);
      else emit("mkl_sparse_s_mm", op, F, time_ms(run, min_rep), "ok", mean ? "values 1/deg" : "");
      mkl_sparse_destroy(A);
    }
    emit("-", "sddmm_dot", F, 0, "n/a", "MKL's C sparse BLAS has no SDDMM");
  }
  return 0;
}
