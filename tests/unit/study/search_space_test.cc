#include "study/search_space.h"

#include <cmath>
#include <set>

#include "test_util.h"

namespace layerlab::study {
namespace {

using nlohmann::json;

Domain numeric(Distribution d, double min, double max, double q = 0, bool integer = false) {
  Domain out;
  out.distribution = d;
  out.min = min;
  out.max = max;
  out.q = q;
  out.integer = integer;
  return out;
}

TEST(Domain, IntUniformCoversBothEndsInEqualCells) {
  const Domain d = numeric(Distribution::kIntUniform, 1, 4, 0, true);
  EXPECT_TRUE(d.discrete());
  EXPECT_EQ(d.size(), 4);
  EXPECT_EQ(d.from_unit(0.0), json(1));
  EXPECT_EQ(d.from_unit(0.2499), json(1));
  EXPECT_EQ(d.from_unit(0.25), json(2));
  EXPECT_EQ(d.from_unit(0.9999999), json(4));
  EXPECT_EQ(d.from_unit(1.0), json(4));  // clamped into [0, 1)
  for (int v = 1; v <= 4; ++v) EXPECT_EQ(d.from_unit(*d.to_unit(json(v))), json(v));
  EXPECT_FALSE(d.to_unit(json(5)).has_value());
}

TEST(Domain, QUniformGivesTidyMultiples) {
  const Domain d = numeric(Distribution::kQUniform, 0.0, 0.5, 0.1);
  EXPECT_EQ(d.size(), 6);
  EXPECT_EQ(d.at(3), json(0.3));  // not 0.30000000000000004
  EXPECT_EQ(d.at(5), json(0.5));
  EXPECT_TRUE(d.at(0).is_number_float());
}

TEST(Domain, LogUniformIsLinearInLogSpace) {
  const Domain d = numeric(Distribution::kLogUniform, 1e-4, 1e-1);
  EXPECT_FALSE(d.discrete());
  EXPECT_DOUBLE_EQ(d.from_unit(0.0).get<double>(), 1e-4);
  EXPECT_NEAR(d.from_unit(0.5).get<double>(), std::pow(10.0, -2.5), 1e-12);
  EXPECT_NEAR(*d.to_unit(json(1e-3)), 1.0 / 3.0, 1e-12);
  EXPECT_FALSE(d.to_unit(json(1.0)).has_value());
  EXPECT_FALSE(d.to_unit(json("x")).has_value());
}

TEST(Domain, QLogUniformStaysOnMultiplesInsideTheRange) {
  const Domain d = numeric(Distribution::kQLogUniform, 3, 100, 5, true);
  std::set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const int64_t v = d.from_unit(i / 1000.0).get<int64_t>();
    EXPECT_EQ(v % 5, 0);
    EXPECT_GE(v, 5);
    EXPECT_LE(v, 100);
    seen.insert(v);
  }
  EXPECT_TRUE(seen.count(5));
  EXPECT_TRUE(seen.count(100));
}

TEST(Domain, IntegerParametersRoundDraws) {
  const Domain d = numeric(Distribution::kLogUniform, 1, 64, 0, true);
  std::set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(d.from_unit(i / 1000.0).get<int64_t>());
  EXPECT_EQ(*seen.begin(), 1);
  EXPECT_EQ(*seen.rbegin(), 64);
  EXPECT_TRUE(d.to_unit(json(64)).has_value());
}

TEST(Domain, JsonFormRoundTrips) {
  EXPECT_EQ(numeric(Distribution::kIntUniform, 1, 8, 0, true).to_json(),
            json({{"distribution", "int_uniform"}, {"min", 1}, {"max", 8}}));
  EXPECT_EQ(numeric(Distribution::kQUniform, 0.5, 2.5, 0.5).to_json(),
            json({{"distribution", "q_uniform"}, {"min", 0.5}, {"max", 2.5}, {"q", 0.5}}));
  Domain v;
  v.distribution = Distribution::kValues;
  v.values = {"relu", "tanh"};
  EXPECT_EQ(v.to_json(), json({{"values", {"relu", "tanh"}}}));
}

TEST(StudyParams, KindsAndCanonicalValues) {
  EXPECT_EQ(param_kind("units"), ParamKind::kInteger);
  EXPECT_EQ(param_kind("learning_rate"), ParamKind::kNumber);
  EXPECT_EQ(param_kind("batch_norm"), ParamKind::kBool);
  EXPECT_EQ(param_kind("activation"), ParamKind::kName);
  EXPECT_EQ(param_kind("layers"), ParamKind::kList);
  EXPECT_TRUE(canonical_value("dropout", json(0)).is_number_float());
  EXPECT_THROW(canonical_value("units", json(0)), Error);
}

TEST(SearchSpace, GridIsNestedLoopsInFileOrder) {
  Domain a;
  a.distribution = Distribution::kValues;
  a.values = {1, 2, 3};
  Domain b = numeric(Distribution::kIntUniform, 10, 11, 0, true);
  Domain fixed;
  fixed.values = {"tanh"};
  const SearchSpace space({{"hidden_layers", a}, {"activation", fixed}, {"units", b}});
  EXPECT_EQ(space.dimensions(), 2u);
  EXPECT_EQ(space.dimension_name(1), "units");
  EXPECT_EQ(space.grid_size(), 6);
  EXPECT_EQ(space.grid_point(0),
            json({{"hidden_layers", 1}, {"activation", "tanh"}, {"units", 10}}));
  EXPECT_EQ(space.grid_point(1),
            json({{"hidden_layers", 1}, {"activation", "tanh"}, {"units", 11}}));
  EXPECT_EQ(space.grid_point(2),
            json({{"hidden_layers", 2}, {"activation", "tanh"}, {"units", 10}}));
  EXPECT_EQ(space.grid_point(5),
            json({{"hidden_layers", 3}, {"activation", "tanh"}, {"units", 11}}));
  const std::vector<double> u = {0.99, 0.0};
  EXPECT_EQ(space.from_unit(u),
            json({{"hidden_layers", 3}, {"activation", "tanh"}, {"units", 10}}));
}

TEST(SearchSpace, ContinuousDomainsHaveNoGrid) {
  const SearchSpace space({{"learning_rate", numeric(Distribution::kUniform, 0.1, 0.2)}});
  EXPECT_EQ(space.grid_size(), 0);
}

}  // namespace
}  // namespace layerlab::study
