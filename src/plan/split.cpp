// split.hpp.
#include "split.hpp"

#include <algorithm>
#include <cmath>

namespace bsvd::detail::plan {

double split_cost(int m, int n) { return double(m) * double(n) * double(std::min(m, n) + 16); }

bool distribute_one(const Shapes &s, int devices, const DistTuning &t) {
  return s.count == 1 && devices >= 2 && t.min_cols > 0 &&
         std::min(s.dims.rows(0), s.dims.cols(0)) >= t.min_cols;
}

std::vector<int> split_batch(const Shapes &s, int parts) {
  const int count = std::max(s.count, 0);
  parts = std::max(1, std::min(parts, count));
  std::vector<int> starts{0};
  if (count == 0) {
    starts.push_back(0);
    return starts;
  }
  if (s.dims.uniform()) { // equal counts, the first count % parts one larger
    const int q = count / parts, r = count % parts;
    for (int p = 0; p < parts; ++p) starts.push_back(starts.back() + q + (p < r ? 1 : 0));
    return starts;
  }
  std::vector<double> prefix(size_t(count) + 1, 0.0);
  for (int b = 0; b < count; ++b)
    prefix[size_t(b) + 1] = prefix[size_t(b)] + split_cost(s.dims.rows(b), s.dims.cols(b));
  const double total = prefix.back();
  for (int p = 1; p < parts; ++p) {
    // The boundary nearest the p-th share of the cost, leaving every range
    // (this one and those after it) at least one matrix.
    const double goal = total * p / parts;
    const int lo = starts.back() + 1, hi = count - (parts - p);
    int b =
        int(std::lower_bound(prefix.begin() + lo, prefix.begin() + hi + 1, goal) - prefix.begin());
    b = std::clamp(b, lo, hi);
    if (b > lo && goal - prefix[size_t(b) - 1] < prefix[size_t(b)] - goal) --b;
    starts.push_back(b);
  }
  starts.push_back(count);
  return starts;
}

} // namespace bsvd::detail::plan
