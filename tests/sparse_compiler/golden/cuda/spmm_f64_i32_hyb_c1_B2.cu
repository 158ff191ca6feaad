// kernel spmm_f64_i32_hyb_c_1_B_2_gpu_r8_l32_c2_p1
extern "C" __global__ void __launch_bounds__(256) strata_spmm_f64_i32_hyb_c_1_B_2_gpu_r8_l32_c2_p1_L0(const float* __restrict__ X, float* __restrict__ Y, const int64_t m, const int64_t n, const int64_t nnz, const int32_t* __restrict__ p0_rows, const int32_t* __restrict__ p0_cols, const int64_t p0_n, const int32_t* __restrict__ p1_rows, const int32_t* __restrict__ p1_cols, const int32_t* __restrict__ p1_eid, const int64_t p1_n, const int32_t* __restrict__ p2_rows, const int32_t* __restrict__ p2_cols, const int32_t* __restrict__ p2_eid, const int64_t p2_n, const int64_t num_tasks) {
  (void)X;
  (void)Y;
  (void)m;
  (void)n;
  (void)nnz;
  (void)p0_rows;
  (void)p0_cols;
  (void)p0_n;
  (void)p1_rows;
  (void)p1_cols;
  (void)p1_eid;
  (void)p1_n;
  (void)p2_rows;
  (void)p2_cols;
  (void)p2_eid;
  (void)p2_n;
  (void)num_tasks;
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
            strata_vstore<float, 2>(&Y[(((i_o * (int64_t)512LL) + (i_i * (int64_t)64LL)) + (f_o * (int64_t)2LL))], strata_vbcast<float, 2>(0.0f));
          }
        }
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(256) strata_spmm_f64_i32_hyb_c_1_B_2_gpu_r8_l32_c2_p1_L1(const float* __restrict__ X, float* __restrict__ Y, const int64_t m, const int64_t n, const int64_t nnz, const int32_t* __restrict__ p0_rows, const int32_t* __restrict__ p0_cols, const int64_t p0_n, const int32_t* __restrict__ p1_rows, const int32_t* __restrict__ p1_cols, const int32_t* __restrict__ p1_eid, const int64_t p1_n, const int32_t* __restrict__ p2_rows, const int32_t* __restrict__ p2_cols, const int32_t* __restrict__ p2_eid, const int64_t p2_n, const int64_t num_tasks) {
  (void)X;
  (void)Y;
  (void)m;
  (void)n;
  (void)nnz;
  (void)p0_rows;
  (void)p0_cols;
  (void)p0_n;
  (void)p1_rows;
  (void)p1_cols;
  (void)p1_eid;
  (void)p1_n;
  (void)p2_rows;
  (void)p2_cols;
  (void)p2_eid;
  (void)p2_n;
  (void)num_tasks;
  int64_t strata_bx = (int64_t)blockIdx.x;
  (void)strata_bx;
  {  // part 0
    const int64_t strata_blocks = strata_floordiv((strata_floordiv((p0_n + (int64_t)7LL), (int64_t)8LL) + (int64_t)3LL), (int64_t)4LL);
    if (strata_bx < strata_blocks) {
      {
        const int64_t p0_i_o_o = (int64_t)0LL + strata_bx;
        (void)p0_i_o_o;
        {
          const int64_t strata_lo0 = (int64_t)0LL;
          const int64_t strata_hi0 = strata_lo0 + (int64_t)4LL;
          for (int64_t p0_i_o_i = strata_lo0; p0_i_o_i < strata_hi0; ++p0_i_o_i) {
            if ((((p0_i_o_o * (int64_t)4LL) + p0_i_o_i) < strata_floordiv((p0_n + (int64_t)7LL), (int64_t)8LL))) {
              {
                const int64_t p0_i_i = (int64_t)0LL + (int64_t)threadIdx.y;
                (void)p0_i_i;
                if (((((p0_i_o_o * (int64_t)32LL) + (p0_i_o_i * (int64_t)8LL)) + p0_i_i) < p0_n)) {
                  {
                    const int64_t f_o_1 = (int64_t)0LL + (int64_t)threadIdx.x;
                    (void)f_o_1;
                    {
                      strata_vec<float, 2> Y_local_0;
                      Y_local_0 = strata_vbcast<float, 2>(0.0f);
                      Y_local_0 = (Y_local_0 + strata_vload<float, 2>(&X[((((int64_t)p0_cols[(((p0_i_o_o * (int64_t)32LL) + (p0_i_o_i * (int64_t)8LL)) + p0_i_i)]) * (int64_t)64LL) + (f_o_1 * (int64_t)2LL))]));
                      strata_vstore<float, 2>(&Y[((((int64_t)p0_rows[(((p0_i_o_o * (int64_t)32LL) + (p0_i_o_i * (int64_t)8LL)) + p0_i_i)]) * (int64_t)64LL) + (f_o_1 * (int64_t)2LL))], Y_local_0);
                    }
                  }
                }
              }
            }
          }
        }
      }
      return;
    }
    strata_bx -= strata_blocks;
  }
  {  // part 1
    const int64_t strata_blocks = strata_floordiv((strata_floordiv((p1_n + (int64_t)7LL), (int64_t)8LL) + (int64_t)1LL), (int64_t)2LL);
    if (strata_bx < strata_blocks) {
      {
        const int64_t p1_i_o_o = (int64_t)0LL + strata_bx;
        (void)p1_i_o_o;
        {
          const int64_t strata_lo1 = (int64_t)0LL;
          const int64_t strata_hi1 = strata_lo1 + (int64_t)2LL;
          for (int64_t p1_i_o_i = strata_lo1; p1_i_o_i < strata_hi1; ++p1_i_o_i) {
            if ((((p1_i_o_o * (int64_t)2LL) + p1_i_o_i) < strata_floordiv((p1_n + (int64_t)7LL), (int64_t)8LL))) {
              {
                const int64_t p1_i_i = (int64_t)0LL + (int64_t)threadIdx.y;
                (void)p1_i_i;
                if (((((p1_i_o_o * (int64_t)16LL) + (p1_i_o_i * (int64_t)8LL)) + p1_i_i) < p1_n)) {
                  {
                    const int64_t f_o_2 = (int64_t)0LL + (int64_t)threadIdx.x;
                    (void)f_o_2;
                    {
                      strata_vec<float, 2> Y_local_1_0;
                      Y_local_1_0 = strata_vbcast<float, 2>(0.0f);
                      Y_local_1_0 = (Y_local_1_0 + (((int64_t)0LL <= ((int64_t)p1_eid[(((p1_i_o_o * (int64_t)32LL) + (p1_i_o_i * (int64_t)16LL)) + (p1_i_i * (int64_t)2LL))])) ? strata_vload<float, 2>(&X[((((int64_t)p1_cols[(((p1_i_o_o * (int64_t)32LL) + (p1_i_o_i * (int64_t)16LL)) + (p1_i_i * (int64_t)2LL))]) * (int64_t)64LL) + (f_o_2 * (int64_t)2LL))]) : strata_vbcast<float, 2>(0.0f)));
                      Y_local_1_0 = (Y_local_1_0 + (((int64_t)0LL <= ((int64_t)p1_eid[((((p1_i_o_o * (int64_t)32LL) + (p1_i_o_i * (int64_t)16LL)) + (p1_i_i * (int64_t)2LL)) + (int64_t)1LL)])) ? strata_vload<float, 2>(&X[((((int64_t)p1_cols[((((p1_i_o_o * (int64_t)32LL) + (p1_i_o_i * (int64_t)16LL)) + (p1_i_i * (int64_t)2LL)) + (int64_t)1LL)]) * (int64_t)64LL) + (f_o_2 * (int64_t)2LL))]) : strata_vbcast<float, 2>(0.0f)));
                      strata_vstore<float, 2>(&Y[((((int64_t)p1_rows[(((p1_i_o_o * (int64_t)16LL) + (p1_i_o_i * (int64_t)8LL)) + p1_i_i)]) * (int64_t)64LL) + (f_o_2 * (int64_t)2LL))], Y_local_1_0);
                    }
                  }
                }
              }
            }
          }
        }
      }
      return;
    }
    strata_bx -= strata_blocks;
  }
  {  // part 2
    const int64_t strata_blocks = strata_floordiv((p2_n + (int64_t)7LL), (int64_t)8LL);
    if (strata_bx < strata_blocks) {
      {
        const int64_t p2_i_o = (int64_t)0LL + strata_bx;
        (void)p2_i_o;
        {
          const int64_t p2_i_i = (int64_t)0LL + (int64_t)threadIdx.y;
          (void)p2_i_i;
          if ((((p2_i_o * (int64_t)8LL) + p2_i_i) < p2_n)) {
            {
              const int64_t f_o_3 = (int64_t)0LL + (int64_t)threadIdx.x;
              (void)f_o_3;
              {
                float Y_local_2[2];
                strata_vstoreu<float, 2>(&Y_local_2[(int64_t)0LL], strata_vbcast<float, 2>(0.0f));
                strata_vstoreu<float, 2>(&Y_local_2[(int64_t)0LL], (strata_vloadu<float, 2>(&Y_local_2[(int64_t)0LL]) + (((int64_t)0LL <= ((int64_t)p2_eid[((p2_i_o * (int64_t)32LL) + (p2_i_i * (int64_t)4LL))])) ? strata_vload<float, 2>(&X[((((int64_t)p2_cols[((p2_i_o * (int64_t)32LL) + (p2_i_i * (int64_t)4LL))]) * (int64_t)64LL) + (f_o_3 * (int64_t)2LL))]) : strata_vbcast<float, 2>(0.0f))));
                strata_vstoreu<float, 2>(&Y_local_2[(int64_t)0LL], (strata_vloadu<float, 2>(&Y_local_2[(int64_t)0LL]) + (((int64_t)0LL <= ((int64_t)p2_eid[(((p2_i_o * (int64_t)32LL) + (p2_i_i * (int64_t)4LL)) + (int64_t)1LL)])) ? strata_vload<float, 2>(&X[((((int64_t)p2_cols[(((p2_i_o * (int64_t)32LL) + (p2_i_i * (int64_t)4LL)) + (int64_t)1LL)]) * (int64_t)64LL) + (f_o_3 * (int64_t)2LL))]) : strata_vbcast<float, 2>(0.0f))));
                strata_vstoreu<float, 2>(&Y_local_2[(int64_t)0LL], (strata_vloadu<float, 2>(&Y_local_2[(int64_t)0LL]) + (((int64_t)0LL <= ((int64_t)p2_eid[(((p2_i_o * (int64_t)32LL) + (p2_i_i * (int64_t)4LL)) + (int64_t)2LL)])) ? strata_vload<float, 2>(&X[((((int64_t)p2_cols[(((p2_i_o * (int64_t)32LL) + (p2_i_i * (int64_t)4LL)) + (int64_t)2LL)]) * (int64_t)64LL) + (f_o_3 * (int64_t)2LL))]) : strata_vbcast<float, 2>(0.0f))));
                strata_vstoreu<float, 2>(&Y_local_2[(int64_t)0LL], (strata_vloadu<float, 2>(&Y_local_2[(int64_t)0LL]) + (((int64_t)0LL <= ((int64_t)p2_eid[(((p2_i_o * (int64_t)32LL) + (p2_i_i * (int64_t)4LL)) + (int64_t)3LL)])) ? strata_vload<float, 2>(&X[((((int64_t)p2_cols[(((p2_i_o * (int64_t)32LL) + (p2_i_i * (int64_t)4LL)) + (int64_t)3LL)]) * (int64_t)64LL) + (f_o_3 * (int64_t)2LL))]) : strata_vbcast<float, 2>(0.0f))));
                strata_atomic_add(&Y[((((int64_t)p2_rows[((p2_i_o * (int64_t)8LL) + p2_i_i)]) * (int64_t)64LL) + (f_o_3 * (int64_t)2LL))], Y_local_2[(int64_t)0LL]);
                strata_atomic_add(&Y[(((((int64_t)p2_rows[((p2_i_o * (int64_t)8LL) + p2_i_i)]) * (int64_t)64LL) + (f_o_3 * (int64_t)2LL)) + (int64_t)1LL)], Y_local_2[(int64_t)1LL]);
              }
            }
          }
        }
      }
      return;
    }
    strata_bx -= strata_blocks;
  }
}

