// Timing a few candidates against each other in one process, as the tuners do
// before they choose.
//
// Timed one after another, a drift in the machine's load favours whichever ran in
// the quiet spell, so the candidates are timed interleaved, round by round. But a
// call that follows another candidate's starts from the state that one left: its
// data in the cache, or its output lines evicted. A plan with streaming stores
// evicts the output, and the plain-store plan timed after it then pays for reading
// its output lines back from memory: on Pubmed at F = 128 (a 10 MB output that fits
// the L3), that made streaming plans look 1.7x faster than plain ones when each
// runs on its own they are 1.6x slower. So every sample is timed right after one
// untimed call of the same candidate, which restores the candidate's own steady
// state, and the round order still spreads the load's drift over all of them.
//
// One untimed call is not always enough, though: after a single-threaded baseline
// (Eigen in `strata bench`) the second thread takes a while to come back up to
// speed, and the CSR kernel timed right after it ran 0.071 ms against 0.063 ms
// timed second (Pubmed, F = 32, one call per sample). So the untimed part is as
// long as the sample: a batch of the same number of calls.
#pragma once

#include <functional>
#include <vector>

namespace strata::sc {

struct InterleavedTiming {
  int rounds = 7;
  // A sample is a batch of calls lasting at least this long (by the candidate's
  // estimate), so a few-microsecond kernel is not timed one call at a time.
  double min_sample_ms = 0;
  // Where positive, rounds stop once this much time has passed, after at least
  // min_rounds of them (slow candidates: the interpreter, big graphs).
  double budget_ms = 0;
  int min_rounds = 3;
};

// Each candidate's median time per call over `rounds` samples (fewer where the
// budget ran out). `estimate_ms` (the same length as `candidates`) sizes the
// batches; left empty with a min_sample_ms, one timed warm-up call of each does.
std::vector<double> time_interleaved(const std::vector<std::function<void()>>& candidates,
                                     const std::vector<double>& estimate_ms, const InterleavedTiming& timing);

}  // namespace strata::sc
