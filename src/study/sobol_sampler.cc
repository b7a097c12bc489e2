// sobol: configuration c is point c of a Sobol sequence, digitally shifted (each coordinate's
// bits XORed with a value drawn from the study seed, which keeps the sequence's net
// properties and moves the all-zero first point), mapped to the domains. A pure function
// of the trial number.
#include <array>

#include "common/error.h"
#include "study/sampler.h"

namespace layerlab::study {
namespace {

// Joe & Kuo's direction numbers, file new-joe-kuo-6.21201
// (https://web.maths.unsw.edu.au/~fkuo/sobol/; S. Joe and F. Y. Kuo, "Constructing Sobol
// sequences with better two-dimensional projections", SIAM J. Sci. Comput. 30, 2635-2654,
// 2008), dimensions 2..24: the primitive polynomial's degree s and coefficients a, and the
// initial direction numbers m_1..m_s. Dimension 1 is the van der Corput sequence.
struct Polynomial {
  int s;
  uint32_t a;
  std::array<uint32_t, 7> m;
};
constexpr Polynomial kJoeKuo[kSobolMaxDimensions - 1] = {
    {1, 0, {1}},
    {2, 1, {1, 3}},
    {3, 1, {1, 3, 1}},
    {3, 2, {1, 1, 1}},
    {4, 1, {1, 1, 3, 3}},
    {4, 4, {1, 3, 5, 13}},
    {5, 2, {1, 1, 5, 5, 17}},
    {5, 4, {1, 1, 5, 5, 5}},
    {5, 7, {1, 1, 7, 11, 19}},
    {5, 11, {1, 1, 5, 1, 1}},
    {5, 13, {1, 1, 1, 3, 11}},
    {5, 14, {1, 3, 5, 5, 31}},
    {6, 1, {1, 3, 3, 9, 7, 49}},
    {6, 13, {1, 1, 1, 15, 21, 21}},
    {6, 16, {1, 3, 1, 13, 27, 49}},
    {6, 19, {1, 1, 1, 15, 7, 5}},
    {6, 22, {1, 3, 1, 15, 13, 25}},
    {6, 25, {1, 1, 5, 5, 19, 61}},
    {7, 1, {1, 3, 7, 11, 23, 15, 103}},
    {7, 4, {1, 3, 7, 13, 13, 15, 69}},
    {7, 7, {1, 1, 3, 13, 7, 35, 63}},
    {7, 8, {1, 3, 5, 9, 1, 25, 53}},
    {7, 14, {1, 3, 1, 13, 9, 35, 107}},
};

constexpr int kBits = 32;
using Directions = std::array<std::array<uint32_t, kBits>, kSobolMaxDimensions>;

// v[d][k]: direction number k (bit k of the Gray-coded index) of dimension d, as 32-bit fractions.
Directions make_directions() {
  Directions v{};
  for (int k = 0; k < kBits; ++k) v[0][k] = 1u << (kBits - 1 - k);
  for (size_t d = 1; d < kSobolMaxDimensions; ++d) {
    const Polynomial& p = kJoeKuo[d - 1];
    for (int k = 0; k < kBits; ++k) {
      if (k < p.s) {
        v[d][k] = p.m[static_cast<size_t>(k)] << (kBits - 1 - k);
        continue;
      }
      uint32_t x = v[d][k - p.s] ^ (v[d][k - p.s] >> p.s);
      for (int i = 1; i < p.s; ++i)
        if ((p.a >> (p.s - 1 - i)) & 1u) x ^= v[d][k - i];
      v[d][k] = x;
    }
  }
  return v;
}

class SobolSampler : public Sampler {
 public:
  explicit SobolSampler(const StudySpec& spec)
      : spec_(spec), space_(spec.parameters), total_(spec.total_trials()) {
    if (space_.dimensions() > kSobolMaxDimensions)
      throw invalid_argument("method sobol supports at most " +
                             std::to_string(kSobolMaxDimensions) + " varying parameters");
    const uint64_t seed = study_seed(spec);
    for (size_t k = 0; k < space_.dimensions(); ++k)
      shift_.push_back(static_cast<uint32_t>(counter_hash(seed, 0x50b01ull, k) >> 32));
  }

  std::optional<Suggestion> suggest(int64_t number, std::span<const Observation>,
                                    std::span<const Suggestion>) override {
    if (number < 0 || number >= total_) return std::nullopt;
    const TrialSlot slot = trial_slot(spec_, number);
    std::vector<double> u(space_.dimensions());
    for (size_t k = 0; k < u.size(); ++k)
      u[k] = static_cast<double>(sobol_bits(static_cast<uint64_t>(slot.config), k) ^ shift_[k]) *
             0x1p-32;
    return Suggestion{number, make_trial(spec_, slot.dataset, slot.seed, space_.from_unit(u))};
  }

 private:
  StudySpec spec_;
  SearchSpace space_;
  int64_t total_;
  std::vector<uint32_t> shift_;
};

}  // namespace

uint32_t sobol_bits(uint64_t index, size_t dim) {
  static const Directions v = make_directions();
  if (dim >= kSobolMaxDimensions) throw internal_error("sobol_bits: dimension out of range");
  uint64_t gray = index ^ (index >> 1);
  uint32_t x = 0;
  for (int k = 0; gray != 0 && k < kBits; ++k, gray >>= 1)
    if (gray & 1u) x ^= v[dim][static_cast<size_t>(k)];
  return x;
}

std::unique_ptr<Sampler> make_sobol_sampler(const StudySpec& spec) {
  return std::make_unique<SobolSampler>(spec);
}

}  // namespace layerlab::study
