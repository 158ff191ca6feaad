// CUDA streams and events through the driver API (core/cuda_driver.h).
//
// Work Strata queues on a GPU (generated kernels, cuSPARSE, cuBLAS, copies) goes on
// a CudaStream. Streams are created as blocking streams (CU_STREAM_DEFAULT), so the
// synchronous copies Tensor::to and copy_from make through the NULL stream wait for
// the work queued before them: results are always read after they were written.
// default_stream(d) is one process-wide stream per device, created on first use.
#pragma once

#include "core/cuda_driver.h"

namespace strata {

class CudaStream {
 public:
  // A new stream on device `device` (throws UserError without a usable GPU).
  explicit CudaStream(int device);
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  CUstream get() const { return stream_; }
  int device() const { return device_; }
  // Waits until everything queued on the stream has finished.
  void synchronize() const;

 private:
  int device_;
  CUstream stream_ = nullptr;
};

// The process-wide stream of device `device` (created on first use, never destroyed).
CudaStream& default_stream(int device);

// A timing event: record() queues it on a stream; elapsed_ms(start, stop) waits for
// `stop` and returns the GPU time between the two.
class CudaEvent {
 public:
  explicit CudaEvent(int device);
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  void record(const CudaStream& stream);
  void synchronize() const;
  static float elapsed_ms(const CudaEvent& start, const CudaEvent& stop);

 private:
  int device_;
  CUevent event_ = nullptr;
};

}  // namespace strata
