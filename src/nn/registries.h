// Name registries for the parts a study file names: activations, optimizers, initialisers,
// learning-rate schedules (the loss follows the task: see nn::Task). Adding one is a line
// here plus its kernel in backend/ops.h.
#pragma once

#include <string>

#include "backend/ops.h"
#include "common/registry.h"

namespace layerlab::nn {

enum class Init { kGlorotUniform, kGlorotNormal, kHeUniform, kHeNormal, kLecunNormal };
enum class Schedule { kConstant, kStep, kCosine };

struct OptimizerInfo {
  backend::UpdateRule rule;
  float default_eps;    // as PyTorch's defaults
  float default_beta2;  // adam's beta2; rmsprop's smoothing constant alpha
  bool operator==(const OptimizerInfo& o) const { return rule == o.rule; }
};

const Registry<backend::Activation>& activations();
const Registry<OptimizerInfo>& optimizers();
const Registry<Init>& initializers();
const Registry<Schedule>& schedules();
const Registry<backend::Precision>& precisions();

}  // namespace layerlab::nn
