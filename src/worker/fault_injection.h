// Test hooks that kill the worker process (as kill -9 would) at a chosen point of a chosen
// trial, so crash tests hit "after training, before commit" on purpose, not by luck.
// Set LAYERLAB_TEST_CRASH to a comma-separated list of POINT:TRIALS, e.g.
// "after_training:3"; TRIALS is a trial number, A-B (numbers A to B), A- (A and above) or
// * (every trial: a poison trial or study). With LAYERLAB_TEST_CRASH_ONCE=PATH the crash
// happens once: the first process to reach the point creates PATH and dies; later ones see
// PATH and go on.
#pragma once

#include <cstdint>
#include <string_view>

namespace layerlab::worker {

enum class CrashPoint { kBeforeTraining, kAfterEpoch, kAfterTraining, kAfterCommit };

// Kills the process with SIGKILL if LAYERLAB_TEST_CRASH names this point and trial number.
void maybe_crash(CrashPoint point, int64_t trial_number);

// Sleeps (LAYERLAB_TEST_PAUSE_SECONDS, default 5) if LAYERLAB_TEST_PAUSE names this point
// and trial, after creating LAYERLAB_TEST_PAUSE_FILE if set: a test then knows the worker
// is in the middle of that trial (e.g. to cut its network there).
void maybe_pause(CrashPoint point, int64_t trial_number);

// Parks the worker while the file LAYERLAB_TEST_HOLD_FILE exists (polled every 20 ms), if
// LAYERLAB_TEST_HOLD names this point and trial: a test holds a study mid-way for as long
// as it needs (e.g. to restart the broker while trials wait), then removes the file to let
// every parked worker go on. No file, no wait. A hold never outlasts
// LAYERLAB_TEST_HOLD_SECONDS (default 600), so a test that dies holding it strands nothing.
void maybe_hold(CrashPoint point, int64_t trial_number);

// Throws if LAYERLAB_TEST_THROW names this point and trial: std::bad_alloc, or what
// LAYERLAB_TEST_THROW_WHAT names (bad_alloc, runtime_error, json: a nlohmann::json
// type_error, error: a layerlab::Error kInternal). Tests that a trial whose training throws
// anything ends `failed` with the reason while the worker goes on.
void maybe_throw(CrashPoint point, int64_t trial_number);

// Where the worker can be made to fail on purpose: it calls at() at each point of each
// trial it runs. Tests of the worker loop in process give their own hook; the worker
// process uses environment_faults().
class FaultHook {
 public:
  virtual ~FaultHook() = default;
  virtual void at(CrashPoint point, int64_t trial_number) = 0;
};

// The LAYERLAB_TEST_* variables above, in this order: crash, hold, pause, throw. Nothing
// happens when none is set.
FaultHook& environment_faults();

// Whether `spec` (the variable's value) names this point and trial; for tests of the parser.
bool crash_spec_matches(std::string_view spec, CrashPoint point, int64_t trial_number);

}  // namespace layerlab::worker
