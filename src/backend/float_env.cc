#include "backend/float_env.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define LAYERLAB_HAVE_MXCSR 1
#endif

namespace layerlab::backend {
namespace {

#ifdef LAYERLAB_HAVE_MXCSR
constexpr unsigned kFlushToZero = 1u << 15;      // results below FLT_MIN become 0
constexpr unsigned kDenormalsAreZero = 1u << 6;  // subnormal operands read as 0
constexpr unsigned kFlushBits = kFlushToZero | kDenormalsAreZero;
#endif

unsigned current() {
#ifdef LAYERLAB_HAVE_MXCSR
  return _mm_getcsr();
#else
  return 0;
#endif
}

void set([[maybe_unused]] unsigned state) {
#ifdef LAYERLAB_HAVE_MXCSR
  _mm_setcsr(state);
#endif
}

}  // namespace

FlushDenormals::FlushDenormals() : saved_(current()) {
  flush_denormals_on_this_thread();
}

FlushDenormals::~FlushDenormals() {
  set(saved_);
}

void flush_denormals_on_this_thread() {
#ifdef LAYERLAB_HAVE_MXCSR
  set(current() | kFlushBits);
#endif
}

bool denormals_flushed() {
#ifdef LAYERLAB_HAVE_MXCSR
  return (current() & kFlushBits) == kFlushBits;
#else
  return false;
#endif
}

}  // namespace layerlab::backend
