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
constexpr unsigned kStatusBits = 0x3f;  // the sticky exception flags: not control
#endif

}  // namespace

unsigned float_control() {
#ifdef LAYERLAB_HAVE_MXCSR
  return _mm_getcsr() & ~kStatusBits;
#else
  return 0;
#endif
}

void set_float_control([[maybe_unused]] unsigned state) {
#ifdef LAYERLAB_HAVE_MXCSR
  _mm_setcsr((_mm_getcsr() & kStatusBits) | (state & ~kStatusBits));
#endif
}

FlushDenormals::FlushDenormals() : saved_(float_control()) {
#ifdef LAYERLAB_HAVE_MXCSR
  set_float_control(saved_ | kFlushBits);
#endif
}

FlushDenormals::~FlushDenormals() {
  set_float_control(saved_);
}

bool denormals_flushed() {
#ifdef LAYERLAB_HAVE_MXCSR
  return (float_control() & kFlushBits) == kFlushBits;
#else
  return false;
#endif
}

}  // namespace layerlab::backend
