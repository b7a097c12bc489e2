// The floating-point environment training runs in: denormal (subnormal) floats flushed to
// zero, as TensorFlow does on the CPU by default (PyTorch offers it as
// torch.set_flush_denormal).
//
// Why: a ReLU unit that dies leaves zero gradients, and its momentum (or Adam moments)
// decays geometrically into the subnormal range, where 0.9 * the smallest subnormal rounds
// back to itself, so it stays there for the rest of the trial. On Intel cores an
// instruction with a subnormal operand takes a microcode assist: on this project's Intel VM
// a width-64 network's optimizer update became a third of its step after ~10,000 steps, and
// a 150-epoch digits trial ran 1.3x slower (docs/benchmarks.md). Flushing changes
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

// The calling thread's floating-point control state (rounding, flushing, exception masks;
// not the sticky exception flags), and setting it: the CPU backend's helper threads take
// their caller's for each task (cpu_team.h).
unsigned float_control();
void set_float_control(unsigned state);

// Whether the calling thread flushes denormals (for tests).
bool denormals_flushed();

}  // namespace layerlab::backend
