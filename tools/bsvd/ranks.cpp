// The processes of one bsvd run (ranks.hpp). Without BSVD_CLI_MPI every
// collective is the identity of one process.
#include "ranks.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>

#if defined(BSVD_CLI_MPI)
// The C API only: not the deprecated C++ bindings mpi.h would pull in.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif
#if defined(BSVD_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace bsvd::cli {

int launcher_world_size() {
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char *v = std::getenv(var)) {
      const int n = std::atoi(v);
      if (n > 1) return n;
    }
  return 1;
}

#if defined(BSVD_CLI_MPI)

Ranks::~Ranks() {
  if (!mpi_) return;
  if (std::uncaught_exceptions() > 0)
    MPI_Abort(MPI_COMM_WORLD, 1);
  else
    MPI_Finalize();
}

bool Ranks::start_mpi(std::string &) {
  if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) return false; // MPI aborts first, as a rule
  mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  // The rank among the ranks that share this host's memory: its GPU.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_free(&node);
  return true;
}

void Ranks::max(std::vector<int> &v) const {
  if (mpi_) MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_INT, MPI_MAX, MPI_COMM_WORLD);
}

double Ranks::max(double v) const {
  if (mpi_) MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

void Ranks::sum(std::vector<double> &v) const {
  if (mpi_)
    MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

std::vector<std::string> Ranks::gather(const std::string &mine) const {
  if (!mpi_) return {mine};
  const int len = int(mine.size());
  std::vector<int> lens(rank_ == 0 ? size_ : 0), at(lens.size());
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (rank_ == 0) {
    long total = 0;
    for (int r = 0; r < size_; ++r) {
      at[r] = int(total);
      total += lens[r];
    }
    all.resize(size_t(total));
  }
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), at.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (size_t r = 0; r < lens.size(); ++r)
    out.push_back(all.substr(size_t(at[r]), size_t(lens[r])));
  return out;
}

void Ranks::broadcast(std::string &s) const {
  if (!mpi_) return;
  int len = int(s.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  s.resize(size_t(len));
  MPI_Bcast(s.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
}

#else // one process

Ranks::~Ranks() = default;

bool Ranks::start_mpi(std::string &err) {
  err = "--mpi: this bsvd was built without MPI (configure with -DBSVD_MPI=ON; Debian: "
        "libopenmpi-dev)";
  return false;
}

void Ranks::max(std::vector<int> &) const {}
double Ranks::max(double v) const { return v; }
void Ranks::sum(std::vector<double> &) const {}
std::vector<std::string> Ranks::gather(const std::string &mine) const { return {mine}; }
void Ranks::broadcast(std::string &) const {}

#endif

int Ranks::max(int v) const {
  std::vector<int> x{v};
  max(x);
  return x[0];
}

int Ranks::agree(int rc, const std::string &msg) const {
  std::vector<int> x{rc, rank_ == 0 ? rc : 0};
  max(x);
  if (!msg.empty() && (rank_ == 0 || x[1] == 0)) std::fprintf(stderr, "%s\n", msg.c_str());
  return x[0];
}

void Ranks::select_device(const std::string &backend) const {
#if defined(BSVD_WITH_CUDA)
  // cudaSetDevice creates the device's context: not for cpu runs.
  if (!mpi_ || backend == "cpu") return;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError(); // no GPU: the auto backend runs on the cpu
    return;
  }
  cudaSetDevice(local_rank_ % count);
#else
  (void)backend;
#endif
}

} // namespace bsvd::cli
