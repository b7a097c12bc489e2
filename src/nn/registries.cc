#include "nn/registries.h"

namespace layerlab::nn {

using backend::Activation;
using backend::UpdateRule;

const Registry<Activation>& activations() {
  static const Registry<Activation> r = [] {
    Registry<Activation> reg("activation");
    reg.add("linear", Activation::kLinear)
        .add("relu", Activation::kRelu)
        .add("leaky_relu", Activation::kLeakyRelu)
        .add("elu", Activation::kElu)
        .add("selu", Activation::kSelu)
        .add("gelu", Activation::kGelu)
        .add("tanh", Activation::kTanh)
        .add("sigmoid", Activation::kSigmoid)
        .add("softplus", Activation::kSoftplus);
    return reg;
  }();
  return r;
}

const Registry<OptimizerInfo>& optimizers() {
  static const Registry<OptimizerInfo> r = [] {
    Registry<OptimizerInfo> reg("optimizer");
    reg.add("sgd", {UpdateRule::kSgd, 0.f, 0.f})
        .add("momentum", {UpdateRule::kMomentum, 0.f, 0.f})
        .add("nesterov", {UpdateRule::kNesterov, 0.f, 0.f})
        .add("adam", {UpdateRule::kAdam, 1e-8f, 0.999f})
        .add("adamw", {UpdateRule::kAdamW, 1e-8f, 0.999f})
        .add("rmsprop", {UpdateRule::kRmsprop, 1e-8f, 0.99f})
        .add("adagrad", {UpdateRule::kAdagrad, 1e-10f, 0.f});
    return reg;
  }();
  return r;
}

const Registry<Init>& initializers() {
  static const Registry<Init> r = [] {
    Registry<Init> reg("initialiser");
    reg.add("glorot_uniform", Init::kGlorotUniform)
        .add("glorot_normal", Init::kGlorotNormal)
        .add("he_uniform", Init::kHeUniform)
        .add("he_normal", Init::kHeNormal)
        .add("lecun_normal", Init::kLecunNormal);
    return reg;
  }();
  return r;
}

const Registry<Schedule>& schedules() {
  static const Registry<Schedule> r = [] {
    Registry<Schedule> reg("learning-rate schedule");
    reg.add("constant", Schedule::kConstant)
        .add("step", Schedule::kStep)
        .add("cosine", Schedule::kCosine);
    return reg;
  }();
  return r;
}

const Registry<backend::Precision>& precisions() {
  static const Registry<backend::Precision> r = [] {
    Registry<backend::Precision> reg("precision");
    reg.add("fp32", backend::Precision::kFp32)
        .add("tf32", backend::Precision::kTf32)
        .add("bf16", backend::Precision::kBf16);
    return reg;
  }();
  return r;
}

}  // namespace layerlab::nn
