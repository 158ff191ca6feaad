#include "core/cuda_stream.h"

#include <map>
#include <memory>
#include <mutex>

#include "core/error.h"

namespace strata {

CudaStream::CudaStream(int device) : device_(device) {
  const CudaDriver& d = require_cuda_driver("creating a CUDA stream");
  cuda_set_device(device);
  STRATA_CU(d.cuStreamCreate(&stream_, 0));
}

CudaStream::~CudaStream() {
  if (const CudaDriver* d = cuda_driver(); d && stream_) {
    cuda_set_device(device_);
    d->cuStreamDestroy(stream_);
  }
}

void CudaStream::synchronize() const {
  const CudaDriver& d = require_cuda_driver("synchronizing a CUDA stream");
  cuda_set_device(device_);
  STRATA_CU(d.cuStreamSynchronize(stream_));
}

CudaStream& default_stream(int device) {
  static std::mutex mu;
  // Never destroyed: kernels may be queued from static destructors.
  static auto* streams = new std::map<int, std::unique_ptr<CudaStream>>();
  std::lock_guard<std::mutex> lock(mu);
  auto& s = (*streams)[device];
  if (!s) s = std::make_unique<CudaStream>(device);
  return *s;
}

CudaEvent::CudaEvent(int device) : device_(device) {
  const CudaDriver& d = require_cuda_driver("creating a CUDA event");
  cuda_set_device(device);
  STRATA_CU(d.cuEventCreate(&event_, 0));
}

CudaEvent::~CudaEvent() {
  if (const CudaDriver* d = cuda_driver(); d && event_) {
    cuda_set_device(device_);
    d->cuEventDestroy(event_);
  }
}

void CudaEvent::record(const CudaStream& stream) {
  const CudaDriver& d = require_cuda_driver("recording a CUDA event");
  cuda_set_device(device_);
  STRATA_CU(d.cuEventRecord(event_, stream.get()));
}

void CudaEvent::synchronize() const {
  const CudaDriver& d = require_cuda_driver("waiting for a CUDA event");
  cuda_set_device(device_);
  STRATA_CU(d.cuEventSynchronize(event_));
}

float CudaEvent::elapsed_ms(const CudaEvent& start, const CudaEvent& stop) {
  const CudaDriver& d = require_cuda_driver("timing CUDA events");
  stop.synchronize();
  float ms = 0;
  STRATA_CU(d.cuEventElapsedTime(&ms, start.event_, stop.event_));
  return ms;
}

}  // namespace strata
