// symm: C := alpha*A*B + beta*C with A symmetric, of MxM, stored in its lower triangle,
// B and C of MxN (PolyBench 4.2, blas).
//
// sizes: M=1000 N=1200
// tiny: M=40 N=48
// polly-best:
//   tried (ratio to original, two runs): base 1.18x; stripmine, tile sizes, 2nd-level, register
//   tiling, greedy fusion, no tiling: 0.97-1.23x (noise)
// recipe:
//   transform %i --tile 200,16
//   transform %j --unroll-jam 16 --interleave
//
// i and j tiled 200x16: the k loop's columns of C and B (stride N) are reused by the 16
// columns j of a tile; then j unrolled and jammed by 16 over the k loop, each copy carrying
// its own temp2 (16 sums in flight, C[k, j..j+15] and B[k, j..j+15] contiguous), the copies
// written op by op so that clang's SLP vectorizer makes vectors of them: 7.6x, where one
// copy after the other ran 2.8x (MLIR's passes 7.6x), in one interleaved run. Before, one
// copy after the other: by 16 2.9x, by 8 2.7x, by 8 untiled 2.5x, by 4 untiled 2.1x
// (Polly's best flags 0.9-1.0x).
func.func @kernel_symm(%alpha: f64, %beta: f64, %C: memref<{M}x{N}xf64>,
                       %A: memref<{M}x{M}xf64>, %B: memref<{M}x{N}xf64>) {
  %zero = arith.constant 0.0 : f64
  affine.for %i = 0 to {M} {
    affine.for %j = 0 to {N} {
      %bij = affine.load %B[%i, %j] : memref<{M}x{N}xf64>
      %alpha_b = arith.mulf %alpha, %bij : f64
      %temp2 = affine.for %k = 0 to affine_map<(d0) -> (d0)>(%i)
          iter_args(%sum = %zero) -> (f64) {
        %aik = affine.load %A[%i, %k] : memref<{M}x{M}xf64>
        %ckj = affine.load %C[%k, %j] : memref<{M}x{N}xf64>
        %update = arith.mulf %alpha_b, %aik : f64
        %ckj_new = arith.addf %ckj, %update : f64
        affine.store %ckj_new, %C[%k, %j] : memref<{M}x{N}xf64>
        %bkj = affine.load %B[%k, %j] : memref<{M}x{N}xf64>
        %product = arith.mulf %bkj, %aik : f64
        %next = arith.addf %sum, %product : f64
        affine.yield %next : f64
      }
      %cij = affine.load %C[%i, %j] : memref<{M}x{N}xf64>
      %beta_c = arith.mulf %beta, %cij : f64
      %aii = affine.load %A[%i, %i] : memref<{M}x{M}xf64>
      %diagonal = arith.mulf %alpha_b, %aii : f64
      %partial = arith.addf %beta_c, %diagonal : f64
      %alpha_t = arith.mulf %alpha, %temp2 : f64
      %result = arith.addf %partial, %alpha_t : f64
      affine.store %result, %C[%i, %j] : memref<{M}x{N}xf64>
    }
  }
  return
}
