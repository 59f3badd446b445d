// The data matrix type shared by dpem's readers, domain transforms and models.
#ifndef DPEM_DATA_MATRIX_H_
#define DPEM_DATA_MATRIX_H_

#include <Eigen/Core>

namespace dpem {

// N records x d features, one record per row, stored row-major so that a
// block of consecutive records is contiguous (as in CSV and C-order .npy).
using DataMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace dpem

#endif  // DPEM_DATA_MATRIX_H_
