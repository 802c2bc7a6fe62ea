#include "ordering.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>
#include <utility>

namespace bsvd::detail {

namespace {

// ---- HBJ Sec. 3: the p-strategies closest to row- / column-cyclic --------
//
// A p-strategy for an even order N is a sequence of N - 1 perfect matchings
// of K_N (p-steps) covering every pair once. Ranking the pairs by the
// sequential strategy (row-cyclic: by (p, q); column-cyclic: by (q, p)) and
// a p-strategy by the ranks of its pairs, step after step (each step's pairs
// in ascending rank), the closest p-strategy R||_N (C||_N) is the
// lexicographically least one (HBJ Def. 3.1). HBJ Alg. 3.1 finds it by
// depth-first search: the next p-step is the lexicographically next perfect
// matching of the pairs not yet used, and a step that leaves no completion
// is backtracked. The search is run only for N = 2o, o odd (o = 1: the single
// pair); N = 2^k * 2o is built by k expansions of HBJ Alg. 3.2, which HBJ
// verified to reproduce R||_N, C||_N for N <= 36 and claim in general.
using Steps = std::vector<std::vector<std::pair<int, int>>>; // 0-based pairs

class ClosestSearch {
public:
  ClosestSearch(int N, bool column, long budget) : N_(N), budget_(budget) {
    for (int q = 1; q < N; ++q)
      for (int p = 0; p < q; ++p) edges_.push_back({p, q});
    if (!column) std::sort(edges_.begin(), edges_.end()); // row-cyclic: by (p, q)
    // (column-cyclic: by (q, p), the order generated above)
    used_.assign(edges_.size(), 0);
    free_.assign(size_t(N), 1);
    inc_.resize(size_t(N));
    for (int e = 0; e < int(edges_.size()); ++e) {
      inc_[size_t(edges_[size_t(e)].first)].push_back(e);
      inc_[size_t(edges_[size_t(e)].second)].push_back(e);
    }
  }

  // The p-steps, or empty when the search ran out of its budget.
  Steps run() {
    if (!step(0)) return {};
    Steps out;
    for (const auto &st : steps_) {
      out.emplace_back();
      for (int e : st) out.back().push_back(edges_[size_t(e)]);
    }
    return out;
  }

private:
  // True when vertex v still has an unused pair of rank > e to a free vertex.
  bool has_later(int v, int e) const {
    const auto &l = inc_[size_t(v)];
    for (auto it = std::upper_bound(l.begin(), l.end(), e); it != l.end(); ++it) {
      const auto &pq = edges_[size_t(*it)];
      if (!used_[size_t(*it)] && free_[size_t(pq.first == v ? pq.second : pq.first)]) return true;
    }
    return false;
  }

  // Starts p-step number `done` (all earlier ones fixed).
  bool step(int done) {
    if (done == N_ - 1) return true;
    cur_.clear();
    return match(0, done);
  }

  // Extends the current partial matching with pairs of rank >= i, in
  // lexicographic order; on a perfect matching continues with the next step.
  bool match(int i, int done) {
    if (--budget_ < 0) return false;
    if (int(cur_.size()) == N_ / 2) {
      steps_.push_back(cur_);
      for (int e : cur_) used_[size_t(e)] = 1;
      std::fill(free_.begin(), free_.end(), char(1));
      const std::vector<int> mine = cur_;
      if (step(done + 1)) return true;
      // backtrack: restore this step's state
      steps_.pop_back();
      cur_ = mine;
      for (int e : cur_) used_[size_t(e)] = 0;
      std::fill(free_.begin(), free_.end(), char(1));
      for (int e : cur_) {
        free_[size_t(edges_[size_t(e)].first)] = 0;
        free_[size_t(edges_[size_t(e)].second)] = 0;
      }
      return false;
    }
    for (int e = i; e < int(edges_.size()); ++e) {
      if (used_[size_t(e)]) continue;
      const int a = edges_[size_t(e)].first, b = edges_[size_t(e)].second;
      if (!free_[size_t(a)] || !free_[size_t(b)]) continue;
      free_[size_t(a)] = free_[size_t(b)] = 0;
      cur_.push_back(e);
      if (match(e + 1, done)) return true;
      cur_.pop_back();
      free_[size_t(a)] = free_[size_t(b)] = 1;
      if (budget_ < 0) return false;
      // Leaving pair e out: both its ends must still be matchable later.
      if (!has_later(a, e) || !has_later(b, e)) return false;
    }
    return false;
  }

  int N_;
  long budget_;
  std::vector<std::pair<int, int>> edges_;
  std::vector<std::vector<int>> inc_; // pairs at each vertex, ascending rank
  std::vector<char> used_, free_;
  std::vector<int> cur_;
  std::vector<std::vector<int>> steps_;
};

// HBJ Alg. 3.2: O||_n to O~||_2n (0-based indices).
Steps expand(const Steps &S, bool column) {
  const int n = 2 * int(S.front().size());
  Steps out(size_t(2 * n - 1));
  for (int k = 0; k < n; ++k) out[0].push_back({2 * k, 2 * k + 1});
  for (int i = 2; i <= 2 * n - 1; ++i) {
    auto &o = out[size_t(i - 1)];
    for (const auto &pq : S[size_t(i / 2 - 1)]) {
      const int p = pq.first, q = pq.second;
      if (i % 2 == 0) {
        o.push_back({2 * p, 2 * q}); // NW
        o.push_back({2 * p + 1, 2 * q + 1}); // SE
      } else if (!column) {
        o.push_back({2 * p, 2 * q + 1}); // NE
        o.push_back({2 * p + 1, 2 * q}); // SW
      } else {
        o.push_back({2 * p + 1, 2 * q}); // SW
        o.push_back({2 * p, 2 * q + 1}); // NE
      }
    }
  }
  return out;
}

// The bases 2o (o odd) whose closest p-strategy the search finds at run
// time in milliseconds (22: 1 ms row, 5 ms column). Beyond, the search
// backtracks for long (measured: 26 row-cyclic and 30..70 both exceed 2e7
// nodes, seconds each; 34 takes 0.3 s / 2 s; HBJ too only tabulate small
// orders), so an order N whose odd part exceeds 11 is padded to the next
// order 2^k * base with dummy slots at the end (the real indices are the
// first n, so their pairs keep the ranks R||_N' gives them).
constexpr int kBases[] = {2, 6, 10, 14, 18, 22};
constexpr long kSearchBudget = 2000000; // safety net only

// The smallest order 2^k * base >= N (N even).
int padded_order(int N) {
  int best = 0;
  for (int b : kBases) {
    int o = b;
    while (o < N) o *= 2;
    if (best == 0 || o < best) best = o;
  }
  return best;
}

// The closest p-strategy of order b in kBases (searched once, memoized).
Steps base_steps(int b, bool column) {
  if (b == 2) return {{{0, 1}}};
  static std::mutex mu;
  static std::map<std::pair<int, bool>, Steps> memo;
  std::lock_guard<std::mutex> lk(mu);
  auto it = memo.find({b, column});
  if (it == memo.end())
    it = memo.emplace(std::make_pair(b, column), ClosestSearch(b, column, kSearchBudget).run())
             .first;
  return it->second;
}

// Steps of O~||_N for N = padded_order(N), or empty on failure.
Steps closest_steps(int N, bool column) {
  int base = N, k = 0;
  while (base % 4 == 0) {
    base /= 2;
    ++k;
  }
  Steps S = base_steps(base, column);
  if (!S.empty())
    for (int i = 0; i < k; ++i) S = expand(S, column);
  return S;
}

} // namespace

int parallel_cyclic_slots(int n) { return padded_order(std::max(2, n + (n & 1))); }

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
  } else if (kind == BSVD_ORDERING_ROW_PARALLEL || kind == BSVD_ORDERING_COLUMN_PARALLEL) {
    const int N = parallel_cyclic_slots(n);
    const Steps S = closest_steps(N, kind == BSVD_ORDERING_COLUMN_PARALLEL);
    if (!S.empty()) {
      o.slots = N;
      o.steps = N - 1;
    }
    o.table.reserve(size_t(o.steps) * o.slots);
    // HBJ's reverse (Sec. 3, "progress inwards"): the last step first, so
    // the sweep ends with the step (0, 1), (2, 3), ...
    for (auto st = S.rbegin(); st != S.rend(); ++st)
      for (const auto &pq : *st) {
        o.table.push_back(pq.first);
        o.table.push_back(pq.second);
      }
  }
  if (o.table.empty()) {
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

Ordering make_wcycle_ordering(int nblk, int r, int E) {
  Ordering o;
  o.n = nblk;
  const int half = wcycle_pairs(nblk, r);
  o.slots = 2 * half;
  o.steps = wcycle_steps(nblk, r, E);
  o.table.reserve(size_t(o.steps) * o.slots);
  for (int s = 0; s < o.steps; ++s)
    for (int x = 0; x < half; ++x) {
      int bi = nblk, bj = nblk;
      if (nblk <= 1 || !wcycle_pair(nblk, r, E, s, x, bi, bj)) bi = bj = nblk; // a dummy
      o.table.push_back(bi);
      o.table.push_back(bj);
    }
  return o;
}

std::vector<int> packed_pair_table(bsvd_ordering_t kind, int n) {
  const Ordering o = make_ordering(kind, std::max(n, 1));
  const int half = (n + 1) / 2;
  std::vector<int> t(1 + size_t(o.steps) * size_t(std::max(half, 1)), -1);
  t[0] = o.steps;
  for (int s = 0; s < o.steps; ++s) {
    int k = 0;
    for (int x = 0; x < o.pairs_per_step(); ++x) {
      int p, q;
      o.pair(s, x, p, q);
      if (p < n && q < n) t[1 + size_t(s) * half + k++] = p | (q << 16);
    }
  }
  return t;
}

} // namespace bsvd::detail
