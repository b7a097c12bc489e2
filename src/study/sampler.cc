// The sampler registry and the building blocks the samplers share.
#include "study/sampler.h"

#include "common/error.h"
#include "nn/params.h"

namespace layerlab::study {

const Registry<SamplerFactory>& samplers() {
  static const Registry<SamplerFactory> r = [] {
    Registry<SamplerFactory> reg("method");
    reg.add("grid", &make_grid_sampler)
        .add("random", &make_random_sampler)
        .add("sobol", &make_sobol_sampler)
        .add("tpe", &make_tpe_sampler);
    return reg;
  }();
  return r;
}

std::unique_ptr<Sampler> make_sampler(const StudySpec& spec) {
  return samplers().get(spec.method)(spec);
}

TrialSlot trial_slot(const StudySpec& spec, int64_t number) {
  const auto seeds = static_cast<int64_t>(spec.seeds.size());
  const auto datasets = static_cast<int64_t>(spec.datasets.size());
  const int64_t group = number / seeds;
  return {group / datasets, static_cast<size_t>(group % datasets),
          static_cast<size_t>(number % seeds)};
}

TrialSpec make_trial(const StudySpec& spec, size_t dataset, size_t seed,
                     const nlohmann::json& config) {
  TrialSpec t;
  t.dataset = spec.datasets.at(dataset);
  t.validation_fraction = spec.validation_fraction;
  t.stratify = spec.stratify;
  t.split_seed = 0;
  t.params = nn::Params::from_json(config);
  if (!config.contains("patience")) t.params.patience = spec.patience;
  t.params.seed = spec.seeds.at(seed);
  return t;
}

uint64_t study_seed(const StudySpec& spec) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : spec.name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

namespace {
uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

uint64_t counter_hash(uint64_t seed, uint64_t a, uint64_t b, uint64_t c) {
  return mix64(mix64(mix64(mix64(seed) ^ a) ^ b) ^ c);
}

double counter_uniform(uint64_t seed, uint64_t a, uint64_t b, uint64_t c) {
  return static_cast<double>(counter_hash(seed, a, b, c) >> 11) * 0x1p-53;
}

std::vector<double> random_point(uint64_t seed, int64_t config, size_t dims) {
  std::vector<double> u(dims);
  for (size_t k = 0; k < dims; ++k) u[k] = counter_uniform(seed, static_cast<uint64_t>(config), k);
  return u;
}

}  // namespace layerlab::study
