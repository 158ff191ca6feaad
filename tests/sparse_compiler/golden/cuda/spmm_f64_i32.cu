// kernel spmm_f64_i32_gpu_r8_l32_c2_p1
extern "C" __global__ void __launch_bounds__(256) strata_spmm_f64_i32_gpu_r8_l32_c2_p1_L0(const int64_t* __restrict__ A_indptr, const int32_t* __restrict__ A_indices, const float* __restrict__ X, float* __restrict__ Y, const int64_t m, const int64_t n, const int64_t nnz) {
  (void)A_indptr;
  (void)A_indices;
  (void)X;
  (void)Y;
  (void)m;
  (void)n;
  (void)nnz;
  int64_t strata_bx = (int64_t)blockIdx.x;
  (void)strata_bx;
  {
    {
      const int64_t i_o = (int64_t)0LL + strata_bx;
      (void)i_o;
      {
        const int64_t i_i = (int64_t)0LL + (int64_t)threadIdx.y;
        (void)i_i;
        if ((((i_o * (int64_t)8LL) + i_i) < m)) {
          {
            const int64_t f_o = (int64_t)0LL + (int64_t)threadIdx.x;
            (void)f_o;
            {
              strata_vec<float, 2> Y_local_0;
              Y_local_0 = strata_vbcast<float, 2>(0.0f);
              {
                const int64_t strata_lo0 = A_indptr[((i_o * (int64_t)8LL) + i_i)];
                const int64_t strata_hi0 = strata_lo0 + (A_indptr[(((i_o * (int64_t)8LL) + i_i) + (int64_t)1LL)] - A_indptr[((i_o * (int64_t)8LL) + i_i)]);
                for (int64_t j = strata_lo0; j < strata_hi0; ++j) {
                  Y_local_0 = (Y_local_0 + strata_vload<float, 2>(&X[((((int64_t)A_indices[j]) * (int64_t)64LL) + (f_o * (int64_t)2LL))]));
                }
              }
              strata_vstore<float, 2>(&Y[(((i_o * (int64_t)512LL) + (i_i * (int64_t)64LL)) + (f_o * (int64_t)2LL))], Y_local_0);
            }
          }
        }
      }
    }
  }
}

