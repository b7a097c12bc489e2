// The floating-point environment training runs in: denormal (subnormal) floats flushed to
// zero, as TensorFlow does on the CPU by default (PyTorch offers it as
// torch.set_flush_denormal).
//
// Why: a ReLU unit that dies leaves zero gradients, and its momentum (or Adam moments)
// decays geometrically into the subnormal range, where 0.9 * the smallest subnormal rounds
// back to itself, so it stays there for the rest of the trial. On Intel cores every
// arithmetic instruction with a subnormal operand takes a microcode assist (about 100
// cycles): a width-64 network's optimizer update became a third of its step after ~10,000
// steps, and a 150-epoch digits trial ran 1.3x slower (docs/benchmarks.md). Flushing changes
// values only below 1.2e-38, and the same way on every run, so a configuration's results
// stay bit for bit repeatable on a machine.
//
// x86-64 only (SSE's MXCSR: flush-to-zero and denormals-are-zero); elsewhere a no-op.
#pragma once

namespace layerlab::backend {

// Flushes denormals on the calling thread until destroyed, then restores what was there.
class FlushDenormals {
 public:
  FlushDenormals();
  ~FlushDenormals();
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  unsigned saved_ = 0;
};

// Flushes denormals on the calling thread for the rest of its life (the CPU backend's
// helper threads, which run nothing else).
void flush_denormals_on_this_thread();

// Whether the calling thread flushes denormals (for tests).
bool denormals_flushed();

}  // namespace layerlab::backend
