// grid: every configuration of the discrete domains x datasets x seeds, in the order of
// sampler.h; trial `number` is a pure function of the number.
#include "study/sampler.h"

namespace layerlab::study {
namespace {

class GridSampler : public Sampler {
 public:
  explicit GridSampler(const StudySpec& spec)
      : spec_(spec),
        space_(spec.parameters),
        configs_(space_.grid_size()),
        total_(spec.total_trials()) {}

  std::optional<Suggestion> suggest(int64_t number, std::span<const Observation>,
                                    std::span<const Suggestion>) override {
    if (number < 0 || number >= total_) return std::nullopt;
    const auto seeds = static_cast<int64_t>(spec_.seeds.size());
    const int64_t group = number / seeds;
    return Suggestion{number, make_trial(spec_, static_cast<size_t>(group / configs_),
                                         static_cast<size_t>(number % seeds),
                                         space_.grid_point(group % configs_))};
  }

 private:
  StudySpec spec_;
  SearchSpace space_;
  int64_t configs_;
  int64_t total_;
};

}  // namespace

std::unique_ptr<Sampler> make_grid_sampler(const StudySpec& spec) {
  return std::make_unique<GridSampler>(spec);
}

}  // namespace layerlab::study
