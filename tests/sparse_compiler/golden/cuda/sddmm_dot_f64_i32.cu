// kernel sddmm_dot_f64_i32_gpu_e16_l16_v4
extern "C" __global__ void __launch_bounds__(256) strata_sddmm_dot_f64_i32_gpu_e16_l16_v4_pre_L0(const int64_t* __restrict__ A_indptr, const int32_t* __restrict__ A_indices, const float* __restrict__ X, const float* __restrict__ Y, float* __restrict__ O, const int64_t m, const int64_t n, const int64_t nnz, int64_t* __restrict__ mid_0) {
  (void)A_indptr;
  (void)A_indices;
  (void)X;
  (void)Y;
  (void)O;
  (void)m;
  (void)n;
  (void)nnz;
  (void)mid_0;
  int64_t strata_bx = (int64_t)blockIdx.x;
  (void)strata_bx;
  {
    {
      const int64_t i_j_pre_o = (int64_t)0LL + strata_bx;
      (void)i_j_pre_o;
      {
        const int64_t i_j_pre_i = (int64_t)0LL + (int64_t)threadIdx.x;
        (void)i_j_pre_i;
        if ((((i_j_pre_o * (int64_t)256LL) + i_j_pre_i) < nnz)) {
          mid_0[((i_j_pre_o * (int64_t)256LL) + i_j_pre_i)] = strata_upper_bound(A_indptr, (int64_t)0LL, (m + (int64_t)1LL), ((i_j_pre_o * (int64_t)256LL) + i_j_pre_i));
        }
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(256) strata_sddmm_dot_f64_i32_gpu_e16_l16_v4_L0(const int64_t* __restrict__ A_indptr, const int32_t* __restrict__ A_indices, const float* __restrict__ X, const float* __restrict__ Y, float* __restrict__ O, const int64_t m, const int64_t n, const int64_t nnz, int64_t* __restrict__ mid_0) {
  (void)A_indptr;
  (void)A_indices;
  (void)X;
  (void)Y;
  (void)O;
  (void)m;
  (void)n;
  (void)nnz;
  (void)mid_0;
  int64_t strata_bx = (int64_t)blockIdx.x;
  (void)strata_bx;
  {
    {
      const int64_t i_j_o = (int64_t)0LL + strata_bx;
      (void)i_j_o;
      {
        const int64_t i_j_i = (int64_t)0LL + (int64_t)threadIdx.y;
        (void)i_j_i;
        if ((((i_j_o * (int64_t)16LL) + i_j_i) < nnz)) {
          {
            float O_local_0;
            {
              float O_local_rf;  // one value per thread of the loops bound to threadIdx.x
              {
                const int64_t f_o_rfz = (int64_t)0LL + (int64_t)threadIdx.x;
                (void)f_o_rfz;
                O_local_rf = 0.0f;
              }
              {
                const int64_t i = (mid_0[((i_j_o * (int64_t)16LL) + i_j_i)] - (int64_t)1LL);
                O_local_0 = 0.0f;
                {
                  const int64_t f_o = (int64_t)0LL + (int64_t)threadIdx.x;
                  (void)f_o;
                  O_local_rf = (O_local_rf + strata_vreduce_add((strata_vload<float, 4>(&X[((i * (int64_t)64LL) + (f_o * (int64_t)4LL))]) * strata_vload<float, 4>(&Y[((((int64_t)A_indices[((i_j_o * (int64_t)16LL) + i_j_i)]) * (int64_t)64LL) + (f_o * (int64_t)4LL))]))));
                }
              }
              {
                float O_local_lanes;  // one value per thread of the loops bound to threadIdx.x
                {
                  const int64_t f_o_rfsum = (int64_t)0LL + (int64_t)threadIdx.x;
                  (void)f_o_rfsum;
                  O_local_lanes = O_local_rf;
                }
                O_local_0 = (O_local_0 + strata_warp_reduce_add<16>(O_local_lanes));
              }
            }
            if (threadIdx.x == 0) O[((i_j_o * (int64_t)16LL) + i_j_i)] = O_local_0;
          }
        }
      }
    }
  }
}

