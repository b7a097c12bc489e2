// random: configuration c is the unit-cube point random_point(study seed, c), mapped to the
// domains; a pure function of the trial number.
#include "study/sampler.h"

namespace layerlab::study {
namespace {

class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(const StudySpec& spec)
      : spec_(spec),
        space_(spec.parameters),
        seed_(study_seed(spec)),
        total_(spec.total_trials()) {}

  std::optional<Suggestion> suggest(int64_t number, std::span<const Observation>,
                                    std::span<const Suggestion>) override {
    if (number < 0 || number >= total_) return std::nullopt;
    const TrialSlot slot = trial_slot(spec_, number);
    const std::vector<double> u = random_point(seed_, slot.config, space_.dimensions());
    return Suggestion{number, make_trial(spec_, slot.dataset, slot.seed, space_.from_unit(u))};
  }

 private:
  StudySpec spec_;
  SearchSpace space_;
  uint64_t seed_;
  int64_t total_;
};

}  // namespace

std::unique_ptr<Sampler> make_random_sampler(const StudySpec& spec) {
  return std::make_unique<RandomSampler>(spec);
}

}  // namespace layerlab::study
