// How a call's batch is shared among devices (opts->device_count): ranges of
// consecutive matrices of about equal work, one per device. Host-only, like
// the rest of the plan; core/split.hpp runs the ranges. Decision 0018
// (docs/design/decisions/).
#pragma once

#include "plan.hpp"
#include "tuning.hpp"

#include <vector>

namespace bsvd::detail::plan {

// Work of one matrix in the split's units: a Jacobi sweep's flops grow as
// m n min(m, n), and each matrix also costs its load, finish and scheduling
// (the 16 below: a tiny matrix is not free).
double split_cost(int m, int n);

// starts[0] = 0 < starts[1] < ... < starts.back() = s.count: range p is
// matrices starts[p] ... starts[p + 1] - 1. At most `parts` ranges, none
// empty (fewer when the batch has fewer matrices); each range's cost is as
// close to the mean as the matrices' granularity allows. A batch of none
// gives {0, 0}: one empty range.
std::vector<int> split_batch(const Shapes &s, int parts);

// Whether a call over `devices` devices solves its one matrix across them
// (core/distributed.hpp) rather than on one: a single matrix with
// min(m, n) >= t.min_cols, and two or more devices.
bool distribute_one(const Shapes &s, int devices, const DistTuning &t);

} // namespace bsvd::detail::plan
