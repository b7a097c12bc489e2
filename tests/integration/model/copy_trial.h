// Tests of rerun and best: a copy of a stored trial, made through the store API, with one
// thing changed (the store has no call that rewrites a finished trial, by design).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "store/store.h"

namespace layerlab::testing {

using nlohmann::json;

// Copies trial `number` of study `from` into study `to` (created with the same spec when
// missing) through the store API: added, claimed and finished with the original record,
// after `alter` has changed it. Returns the copy's trial id.
inline int64_t copy_trial(
    store::Store& st, const std::string& from, int64_t number, const std::string& to,
    const std::function<void(store::TrialFinish&, json& params)>& alter = {}) {
  const auto src = st.find_study(from);
  EXPECT_TRUE(src.has_value());
  store::TrialRecord trial;
  for (const auto& t : st.list_trials(src->id, {}))
    if (t.number == number) trial = t;
  EXPECT_EQ(trial.number, number);
  auto dst = st.find_study(to);
  if (!dst) {
    json spec = src->spec;
    spec["name"] = to;
    st.create_study(to, spec);
    dst = st.find_study(to);
  }
  store::TrialFinish f{0, 0, trial.status, trial.result, trial.value, trial.error, {}};
  for (const auto& e : st.list_epochs(trial.id, trial.attempts)) f.epochs.push_back(e.row);
  json params = trial.params;
  if (alter) alter(f, params);
  st.add_trials(dst->id, {{number, trial.dataset, params, 0}});
  store::ClaimOptions claim;
  claim.study_id = dst->id;
  const auto c = st.claim_next("copier", claim);
  EXPECT_TRUE(c.has_value());
  f.trial_id = c->trial_id;
  f.attempt = c->attempt;
  EXPECT_EQ(st.finish_trials({f}), std::vector<bool>{true});
  return c->trial_id;
}

}  // namespace layerlab::testing
