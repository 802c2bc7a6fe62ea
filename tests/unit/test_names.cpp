// The names of the public enums (bsvd.h, src/core/names.cpp): every
// enumerator has a unique name, parse(string(x)) == x, '_' stands for '-',
// values outside 0 ... COUNT - 1 have no name, and bad names are errors that
// name the argument. The canonical names are spelled out here once more so
// that a change to one of them is a deliberate, visible change.
#include <bsvd/bsvd.h>

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace {

struct Enum {
  const char *type;
  const char *(*name)(int);
  bsvd_status_t (*parse)(const char *, int *);
  int count;
  std::vector<std::string> expect; // the names of 0, 1, ...
};

std::vector<Enum> all_enums() {
  return {
      {"bsvd_job_t", bsvd_job_string, bsvd_job_from_string, BSVD_JOB_COUNT, {"values", "vectors"}},
      {"bsvd_backend_t",
       bsvd_backend_string,
       bsvd_backend_from_string,
       BSVD_BACKEND_COUNT,
       {"auto", "cpu", "cuda"}},
      {"bsvd_ordering_t",
       bsvd_ordering_string,
       bsvd_ordering_from_string,
       BSVD_ORDERING_COUNT,
       {"round-robin", "odd-even", "row-parallel", "column-parallel"}},
      {"bsvd_variant_t",
       bsvd_variant_string,
       bsvd_variant_from_string,
       BSVD_VARIANT_COUNT,
       {"auto", "unblocked", "blocked"}},
      {"bsvd_pair_solver_t",
       bsvd_pair_solver_string,
       bsvd_pair_solver_from_string,
       BSVD_PAIR_SOLVER_COUNT,
       {"auto", "gram", "evd", "svd"}},
      {"bsvd_path_t",
       bsvd_path_string,
       bsvd_path_from_string,
       BSVD_PATH_COUNT,
       {"trivial", "cpu-unblocked", "cpu-blocked", "cuda-fused", "cuda-blocked", "cuda-qr",
        "cuda-pair-evd", "cuda-pair-svd", "cuda-qrcp", "cuda-tiny", "cpu-lapack", "cuda-gram",
        "cuda-devices", "cuda-bidiag"}},
      {"bsvd_status_code",
       bsvd_status_code_string,
       bsvd_status_code_from_string,
       BSVD_STATUS_COUNT,
       {"success", "backend unavailable", "not supported", "allocation failed", "device error",
        "workspace too small", "internal error"}},
  };
}

TEST(Names, EveryEnumeratorHasItsCanonicalUniqueName) {
  for (const Enum &e : all_enums()) {
    ASSERT_EQ(int(e.expect.size()), e.count) << e.type;
    std::set<std::string> seen;
    for (int v = 0; v < e.count; ++v) {
      const char *s = e.name(v);
      ASSERT_NE(s, nullptr) << e.type << " " << v;
      EXPECT_EQ(std::string(s), e.expect[v]) << e.type << " " << v;
      EXPECT_TRUE(seen.insert(s).second) << e.type << ": " << s << " twice";
    }
  }
}

TEST(Names, ParseOfStringIsTheValue) {
  for (const Enum &e : all_enums()) {
    for (int v = 0; v < e.count; ++v) {
      int got = -99;
      EXPECT_EQ(e.parse(e.name(v), &got), 0)
          << e.type << " " << e.name(v) << ": " << bsvd_last_error();
      EXPECT_EQ(got, v) << e.type << " " << e.name(v);
      // '_' stands for '-' (round_robin, cuda_qrcp).
      std::string alt = e.name(v);
      for (char &c : alt)
        if (c == '-') c = '_';
      got = -99;
      EXPECT_EQ(e.parse(alt.c_str(), &got), 0) << e.type << " " << alt;
      EXPECT_EQ(got, v) << e.type << " " << alt;
    }
  }
}

TEST(Names, CountingUpUntilNullListsEveryValue) {
  for (const Enum &e : all_enums()) {
    int n = 0;
    while (e.name(n)) ++n;
    EXPECT_EQ(n, e.count) << e.type;
  }
}

TEST(Names, ValuesOutsideTheRangeHaveNoName) {
  for (const Enum &e : all_enums()) {
    EXPECT_EQ(e.name(-1), nullptr) << e.type;
    EXPECT_EQ(e.name(e.count), nullptr) << e.type;
    EXPECT_EQ(e.name(0x7fffffff), nullptr) << e.type; // the _MAX_ENUM entries
    EXPECT_EQ(e.name(-0x7fffffff - 1), nullptr) << e.type;
  }
}

TEST(Names, BadNamesAreErrorsThatListTheNames) {
  for (const Enum &e : all_enums()) {
    const char *bad[] = {"", "nope", "Round-Robin", "cuda-", "auto ", "-"};
    for (const char *b : bad) {
      int got = 1234;
      EXPECT_EQ(e.parse(b, &got), -1) << e.type << " '" << b << "'";
      EXPECT_EQ(got, 1234) << e.type << " '" << b << "' changed the value";
      const std::string msg = bsvd_last_error();
      EXPECT_NE(msg.find("argument 1 (name)"), std::string::npos) << msg;
      EXPECT_NE(msg.find(e.type), std::string::npos) << msg;
      EXPECT_NE(msg.find(e.name(e.count - 1)), std::string::npos) << msg;
    }
    int got = 1234;
    EXPECT_EQ(e.parse(nullptr, &got), -1) << e.type;
    EXPECT_EQ(got, 1234);
    EXPECT_EQ(e.parse(e.name(0), nullptr), -2) << e.type;
    EXPECT_NE(std::string(bsvd_last_error()).find("argument 2 (value)"), std::string::npos);
    // A good name clears the error, as every call that returns 0.
    EXPECT_EQ(e.parse(e.name(0), &got), 0);
    EXPECT_STREQ(bsvd_last_error(), "");
  }
}

TEST(Names, StatusStringCoversEveryStatus) {
  for (int s = 0; s < BSVD_STATUS_COUNT; ++s)
    EXPECT_STREQ(bsvd_status_string(s), bsvd_status_code_string(s)) << s;
  EXPECT_STREQ(bsvd_status_string(BSVD_STATUS_WORKSPACE_TOO_SMALL), "workspace too small");
  EXPECT_STREQ(bsvd_status_string(-1), "invalid argument");
  EXPECT_STREQ(bsvd_status_string(-18), "invalid argument");
  EXPECT_STREQ(bsvd_status_string(BSVD_STATUS_COUNT), "unknown status");
  EXPECT_STREQ(bsvd_status_string(0x7fffffff), "unknown status");
  EXPECT_EQ(bsvd_status_code_string(-1), nullptr);
}

// The enumerators and the counts of bsvd.h agree with the tables (names.cpp
// also checks this at compile time).
TEST(Names, HeaderConstantsMatchTheLastEnumerators) {
  EXPECT_EQ(BSVD_JOB_COUNT, BSVD_JOB_VECTORS + 1);
  EXPECT_EQ(BSVD_BACKEND_COUNT, BSVD_BACKEND_CUDA + 1);
  EXPECT_EQ(BSVD_ORDERING_COUNT, BSVD_ORDERING_COLUMN_PARALLEL + 1);
  EXPECT_EQ(BSVD_VARIANT_COUNT, BSVD_VARIANT_BLOCKED + 1);
  EXPECT_EQ(BSVD_PAIR_SOLVER_COUNT, BSVD_PAIR_SVD_SM + 1);
  EXPECT_EQ(BSVD_PATH_COUNT, BSVD_PATH_CUDA_BIDIAG + 1);
  EXPECT_EQ(BSVD_STATUS_COUNT, BSVD_STATUS_INTERNAL_ERROR + 1);
  EXPECT_STREQ(bsvd_path_string(BSVD_PATH_CUDA_QRCP), "cuda-qrcp");
  EXPECT_STREQ(bsvd_path_string(BSVD_PATH_CUDA_TINY), "cuda-tiny");
}

} // namespace
