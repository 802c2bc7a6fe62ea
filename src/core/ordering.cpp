#include "ordering.hpp"

#include <numeric>
#include <utility>

namespace bsvd::detail {

Ordering make_ordering(bsvd_ordering_t kind, int n) {
  Ordering o;
  o.n = n;
  o.slots = n + (n & 1);
  if (o.slots < 2) o.slots = 2;
  const int half = o.slots / 2;
  if (kind == BSVD_ORDERING_ODD_EVEN) {
    o.steps = o.slots;
    o.table.reserve(size_t(o.steps) * o.slots);
    std::vector<int> at(o.slots); // item held by each position
    std::iota(at.begin(), at.end(), 0);
    for (int s = 0; s < o.steps; ++s) {
      const int first = s & 1;
      int k = 0;
      for (int i = first; i + 1 < o.slots; i += 2, ++k) {
        const int a = at[i], b = at[i + 1];
        o.table.push_back(a < b ? a : b);
        o.table.push_back(a < b ? b : a);
        std::swap(at[i], at[i + 1]);
      }
      // Odd steps leave the two end positions unpaired: pad with a dummy
      // pair of out-of-range indices so every step has `half` entries.
      for (; k < half; ++k) {
        o.table.push_back(o.slots);
        o.table.push_back(o.slots);
      }
    }
  } else {
    o.steps = o.slots - 1;
    o.table.reserve(size_t(o.steps) * o.slots);
    for (int s = 0; s < o.steps; ++s)
      for (int k = 0; k < half; ++k) {
        int p, q;
        round_robin_pair(o.slots, s, k, p, q);
        o.table.push_back(p);
        o.table.push_back(q);
      }
  }
  return o;
}

} // namespace bsvd::detail
