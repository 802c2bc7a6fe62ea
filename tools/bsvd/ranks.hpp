// The processes of one `bsvd run`: one without MPI, or the ranks of
// MPI_COMM_WORLD under `bsvd run --mpi` (docs/cli.md, "Several processes").
// Only the CLI links MPI (BSVD_MPI in CMakeLists.txt); the library does not.
// Every member below but rank() and size() is collective: each rank calls
// it, in the same order, on error paths too, so that an error on one rank
// never leaves the others waiting.
#pragma once

#include <string>
#include <vector>

namespace bsvd::cli {

class Ranks {
public:
  Ranks() = default; // one process
  Ranks(const Ranks &) = delete;
  Ranks &operator=(const Ranks &) = delete;
  // MPI_Finalize; MPI_Abort when an exception unwinds past it (the other
  // ranks may wait in a collective this rank will never reach).
  ~Ranks();

  // MPI_Init and the ranks of MPI_COMM_WORLD. False with a reason when this
  // bsvd was built without MPI.
  bool start_mpi(std::string &err);
  // With the cuda or auto backend, each rank takes the GPU of its rank
  // among the ranks of its host (modulo the visible GPUs), so that the
  // ranks of a node do not share the first GPU. Not collective after
  // start_mpi.
  void select_device(const std::string &backend) const;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool mpi() const { return mpi_; }

  // The largest v of every rank, elementwise.
  void max(std::vector<int> &v) const;
  int max(int v) const;
  double max(double v) const;
  // The sum over the ranks, elementwise.
  void sum(std::vector<double> &v) const;
  // Rank 0: every rank's string in rank order; the others: empty.
  std::vector<std::string> gather(const std::string &mine) const;
  // Rank 0's s on every rank.
  void broadcast(std::string &s) const;
  // The largest rc of every rank. msg (an error of this rank, may be empty)
  // is printed on stderr by rank 0, or by the other ranks when rank 0 has
  // none: an error all ranks see (a usage error) is printed once, one only
  // some see (a file missing on one host) by those that see it.
  int agree(int rc, const std::string &msg) const;

private:
  bool mpi_ = false;
  int rank_ = 0, size_ = 1, local_rank_ = 0;
};

// The number of ranks when this process was started by an MPI launcher
// (Open MPI's OMPI_COMM_WORLD_SIZE, MPICH's and Slurm's PMI_SIZE), else 1:
// without --mpi every rank would solve all of the batch and write the same
// files, so bsvd run refuses.
int launcher_world_size();

} // namespace bsvd::cli
