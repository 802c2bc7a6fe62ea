/* The public header compiled as C (C99, -pedantic-errors, tests/CMakeLists.txt)
 * and a few calls from C: bsvd_options_t with struct_size, positional
 * initializers written before struct_size existed, and the enum names.
 * Prints the plain closing line "N passed, N failed"; exit status 1 on any
 * failure. */
#include <bsvd/bsvd.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int passed = 0, failed = 0;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (cond) {                                                                                    \
      ++passed;                                                                                    \
    } else {                                                                                       \
      ++failed;                                                                                    \
      fprintf(stderr, "%s:%d: FAILED: %s (%s)\n", __FILE__, __LINE__, #cond, bsvd_last_error());   \
    }                                                                                              \
  } while (0)

/* A 3 x 2 matrix and its singular values sqrt(10) and 0... any small solve
 * that succeeds will do; the values are checked for order only. */
static bsvd_status_t solve(const bsvd_options_t *opts, double S[2], int *info) {
  const double A[6] = {1, 2, 3, 4, 5, 7};
  return bsvd_dgesvj_strided_batched(BSVD_JOB_VALUES, 3, 2, A, 3, 6, S, 2, NULL, 1, 0, NULL, 1, 0,
                                     info, NULL, 1, opts);
}

int main(void) {
  bsvd_options_t o;
  double S[2] = {0, 0};
  int info = -5, v = -1, n;
  const char *s;

  /* bsvd_options_init sets struct_size; this version's size is read. */
  memset(&o, 0xff, sizeof o);
  bsvd_options_init(&o);
  CHECK(o.struct_size == sizeof(bsvd_options_t));
  /* Fields added later lie after struct_size, with their defaults. */
  CHECK(offsetof(bsvd_options_t, struct_size) + sizeof(size_t) ==
        offsetof(bsvd_options_t, device_count));
  CHECK(o.device_count == 0 && o.devices == NULL);
  o.backend = BSVD_BACKEND_CPU;
  CHECK(solve(&o, S, &info) == 0);
  CHECK(info == 0 && S[0] >= S[1] && S[1] > 0);

  /* A positional initializer of the fields before struct_size (code
   * written for earlier headers): struct_size is 0, the fields are read. */
  {
    bsvd_options_t p = {BSVD_BACKEND_CPU,
                        BSVD_ORDERING_ODD_EVEN,
                        BSVD_VARIANT_AUTO,
                        0,
                        0.0,
                        0,
                        BSVD_EIG_SWEEPS_AUTO,
                        1,
                        NULL,
                        NULL,
                        0,
                        NULL,
                        0,
                        BSVD_PAIR_AUTO,
                        0,
                        0,
                        0};
    CHECK(p.struct_size == 0);
    CHECK(solve(&p, S, &info) == 0);
    p.ordering = (bsvd_ordering_t)BSVD_ORDERING_COUNT;
    CHECK(solve(&p, S, &info) == -18);
  }

  /* A nonzero struct_size below this version's is rejected: opts is
   * argument 18. */
  o.struct_size = offsetof(bsvd_options_t, struct_size);
  CHECK(solve(&o, S, &info) == -18);
  CHECK(strstr(bsvd_last_error(), "struct_size") != NULL);

  /* Names: count up until NULL. */
  for (n = 0; bsvd_path_string(n); ++n) {}
  CHECK(n == BSVD_PATH_COUNT);
  s = bsvd_path_string(BSVD_PATH_CPU_LAPACK);
  CHECK(s != NULL && bsvd_path_from_string(s, &v) == 0 && v == BSVD_PATH_CPU_LAPACK);
  CHECK(bsvd_ordering_from_string("no such ordering", &v) == -1);
  CHECK(bsvd_ordering_string(BSVD_ORDERING_MAX_ENUM) == NULL);
  CHECK(strcmp(bsvd_status_string(-3), bsvd_status_string(-1)) == 0);

  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
