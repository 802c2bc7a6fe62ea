// Resolution of the per-matrix rotation threshold (declared in batch.hpp).
#include "batch.hpp"

#include <algorithm>
#include <cmath>

namespace bsvd::detail {

// tol > 0: the caller's value. Otherwise sqrt(m) * u, LAPACK xGESVJ's CTOL:
// the rounding error of an m-term inner product of two unit vectors is
// typically of order sqrt(m) u, so demanding more than that relative
// orthogonality would only produce rotations driven by rounding noise.
double resolve_tol(double tol, int m, double u) {
  if (tol > 0) return tol;
  return std::sqrt(double(std::max(m, 1))) * u;
}

} // namespace bsvd::detail
