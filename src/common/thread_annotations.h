// Lock contracts that clang checks (-Wthread-safety, on in every clang build: the sanitize
// preset): which mutex guards a member, which functions need it held or must not hold it.
// Other compilers see nothing. Use them with common/mutex.h, whose Mutex the analysis knows
// (libstdc++'s std::mutex carries no annotations).
#pragma once

#if defined(__clang__)
#define LAYERLAB_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define LAYERLAB_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) LAYERLAB_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY LAYERLAB_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) LAYERLAB_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) LAYERLAB_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) LAYERLAB_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) LAYERLAB_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) LAYERLAB_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) LAYERLAB_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) LAYERLAB_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define RETURN_CAPABILITY(x) LAYERLAB_THREAD_ANNOTATION(lock_returned(x))
// For a read the analysis cannot follow (say why beside it).
#define NO_THREAD_SAFETY_ANALYSIS LAYERLAB_THREAD_ANNOTATION(no_thread_safety_analysis)
