/*
 * wmma_lowering.cu - the integer and sub-byte `wmma.mma` forms, compiled for
 * sm_90a only to read their SASS (tests/cuda/wmma_check.py): ptxas lowers
 * each to instructions of an existing `mma.sync` row, so mmafuzz has no rows
 * for them.  Never run; the kernels only have to compile.
 *   k_int<M,N,K,T>  s8/u8 m16n16k16, m32n8k16, m8n32k16
 *   k_sub<P>        s4/u4 m8n8k32 (wmma::experimental)
 *   k_b1<AND?>      b1 m8n8k128, .and.popc and .xor.popc (bmma_sync)
 */
#include <mma.h>
using namespace nvcuda;
template <int M, int N, int K, typename T>
__global__ void k_int(const T *a, const T *b, int *d) {
  wmma::fragment<wmma::matrix_a, M, N, K, T, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, M, N, K, T, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, M, N, K, int> fc;
  wmma::load_matrix_sync(fa, a, K); wmma::load_matrix_sync(fb, b, K);
  wmma::load_matrix_sync(fc, d, N, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(d, fc, N, wmma::mem_row_major);
}
template __global__ void k_int<16,16,16,signed char>(const signed char*, const signed char*, int*);
template __global__ void k_int<32,8,16,signed char>(const signed char*, const signed char*, int*);
template __global__ void k_int<8,32,16,unsigned char>(const unsigned char*, const unsigned char*, int*);
namespace ex = wmma::experimental;
template <typename P>
__global__ void k_sub(const void *a, const void *b, int *d) {
  wmma::fragment<wmma::matrix_a, 8, 8, 32, P, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 8, 32, P, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 8, 8, 32, int> fc;
  wmma::load_matrix_sync(fa, a, 32); wmma::load_matrix_sync(fb, b, 32);
  wmma::load_matrix_sync(fc, d, 8, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(d, fc, 8, wmma::mem_row_major);
}
template __global__ void k_sub<ex::precision::s4>(const void*, const void*, int*);
template __global__ void k_sub<ex::precision::u4>(const void*, const void*, int*);
template <int OP>
__global__ void k_b1(const void *a, const void *b, int *d) {
  wmma::fragment<wmma::matrix_a, 8, 8, 128, ex::precision::b1, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 8, 128, ex::precision::b1, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 8, 8, 128, int> fc;
  wmma::load_matrix_sync(fa, a, 128); wmma::load_matrix_sync(fb, b, 128);
  wmma::load_matrix_sync(fc, d, 8, wmma::mem_row_major);
  if (OP) wmma::bmma_sync(fc, fa, fb, fc, ex::bmmaBitOpAND); else wmma::bmma_sync(fc, fa, fb, fc, ex::bmmaBitOpXOR);
  wmma::store_matrix_sync(d, fc, 8, wmma::mem_row_major);
}
template __global__ void k_b1<0>(const void*, const void*, int*);
template __global__ void k_b1<1>(const void*, const void*, int*);
