// The SuiteSparse matrices shipped in data/matrices: every file reads, its
// size and nonzero count match MANIFEST.tsv, and for the 85 matrices with
// reference singular values (MATLAB svd, SJSU collection) LAPACK agrees to
// 1e-12 relative to sigma_1 (which checks the reader and the reference
// together).
#include "testing/io.hpp"
#include "testing/lapack_ref.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace bt = bsvd::testing;

namespace {

struct ManifestRow {
  int rows = 0, cols = 0;
  long nnz = 0;
  std::string svals;
};

std::map<std::string, ManifestRow> read_manifest(const std::string &dir) {
  std::map<std::string, ManifestRow> rows;
  std::ifstream f(dir + "/MANIFEST.tsv");
  std::string line;
  std::vector<std::string> header;
  while (std::getline(f, line)) {
    std::vector<std::string> col;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, '\t')) col.push_back(c);
    if (header.empty()) {
      header = col;
      continue;
    }
    auto get = [&](const char *name) -> std::string {
      for (size_t i = 0; i < header.size(); ++i)
        if (header[i] == name) return i < col.size() ? col[i] : std::string();
      return {};
    };
    ManifestRow r;
    r.rows = std::stoi(get("rows"));
    r.cols = std::stoi(get("cols"));
    r.nnz = std::stol(get("nnz"));
    r.svals = get("svals_file");
    rows[get("file")] = r;
  }
  return rows;
}

std::vector<double> read_svals(const std::string &path) {
  std::vector<double> s;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    s.push_back(std::stod(line));
  }
  return s;
}

} // namespace

TEST(TestingMatrices, AllFilesReadAndMatchManifest) {
  const std::string dir = bt::default_matrix_dir();
  const auto files = bt::list_matrix_market(dir);
  const auto manifest = read_manifest(dir);
  ASSERT_EQ(files.size(), 141u) << dir;
  ASSERT_EQ(manifest.size(), 141u);
  int svals_checked = 0;
  double worst = 0;
  std::string worst_name;
  for (const auto &path : files) {
    const std::string file = std::filesystem::path(path).filename().string();
    bt::DenseMatrix d;
    std::string err;
    ASSERT_TRUE(bt::read_matrix_market(path, d, err)) << err;
    EXPECT_EQ(d.name + ".mtx", file);
    auto it = manifest.find(file);
    ASSERT_NE(it, manifest.end()) << file;
    const ManifestRow &row = it->second;
    EXPECT_EQ(d.m, row.rows) << file;
    EXPECT_EQ(d.n, row.cols) << file;
    EXPECT_EQ(d.a.size(), size_t(d.m) * d.n);
    const long nnz = std::count_if(d.a.begin(), d.a.end(), [](double x) { return x != 0; });
    EXPECT_EQ(nnz, row.nnz) << file;
    if (row.svals.empty()) continue;

    const auto ref = read_svals(dir + "/" + row.svals);
    const int k = std::min(d.m, d.n);
    ASSERT_EQ(int(ref.size()), k) << row.svals;
    std::vector<double> s(k);
    ASSERT_EQ(0, bt::reference_singular_values<double>(d.m, d.n, d.a.data(), d.m, s.data()))
        << file;
    double err_max = 0;
    for (int i = 0; i < k; ++i) err_max = std::max(err_max, std::abs(s[i] - ref[i]));
    const double rel = err_max / ref[0];
    EXPECT_LT(rel, 1e-12) << file;
    if (rel > worst) {
      worst = rel;
      worst_name = file;
    }
    ++svals_checked;
  }
  EXPECT_EQ(svals_checked, 85);
  std::printf(
      "[   INFO   ] %d matrices with reference values; worst max|s - s_ref| / s_1 = %.3g (%s)\n",
      svals_checked, worst, worst_name.c_str());
}

TEST(TestingMatrices, DefaultDirectory) {
  const std::string dir = bt::default_matrix_dir();
  EXPECT_EQ(dir.substr(dir.size() - std::string("/data/matrices").size()), "/data/matrices");
  EXPECT_TRUE(std::filesystem::is_directory(dir));
}
