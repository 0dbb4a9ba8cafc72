// syr2k: C := alpha*A*B^T + alpha*B*A^T + beta*C on the lower triangle of C, A and B of NxM
// (PolyBench 4.2, blas).
//
// sizes: N=1200 M=1000
// tiny: N=60 M=40
// polly-best: -mllvm -polly-tiling=false
//   tried (ratio to original, two runs): base 2.0x/2.7x, no tiling 5.2x/2.9x, loop fusion greedy
//   3.9x/2.9x
// recipe:
//   transform %i --distribute
//   transform %k --interchange
//   transform %i#2 --unroll-jam 4
//   transform %j#2 --unroll-jam 3
//   transform %k --scalar-replace
//
// beta * C distributed out, (k, j) interchanged so that k is innermost (rows of A), a 4x3
// register tile: i unrolled and jammed by 4 around the triangular j (the copies jammed where
// they all run, the rest of the triangle apart), then j by 3, and the twelve sums kept in
// registers through k (scalar replacement). In one interleaved run: 4x3 3.9x, 2x4 2.8x,
// 2x6 2.3x, 1x12 without scalar replacement 2.1x (Polly's best flags 2.2-2.6x).
func.func @kernel_syr2k(%alpha: f64, %beta: f64, %C: memref<{N}x{N}xf64>,
                        %A: memref<{N}x{M}xf64>, %B: memref<{N}x{M}xf64>) {
  affine.for %i = 0 to {N} {
    affine.for %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i) {
      %c = affine.load %C[%i, %j] : memref<{N}x{N}xf64>
      %scaled = arith.mulf %c, %beta : f64
      affine.store %scaled, %C[%i, %j] : memref<{N}x{N}xf64>
    }
    affine.for %k = 0 to {M} {
      affine.for %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i) {
        %ajk = affine.load %A[%j, %k] : memref<{N}x{M}xf64>
        %ajk_alpha = arith.mulf %ajk, %alpha : f64
        %bik = affine.load %B[%i, %k] : memref<{N}x{M}xf64>
        %first = arith.mulf %ajk_alpha, %bik : f64
        %bjk = affine.load %B[%j, %k] : memref<{N}x{M}xf64>
        %bjk_alpha = arith.mulf %bjk, %alpha : f64
        %aik = affine.load %A[%i, %k] : memref<{N}x{M}xf64>
        %second = arith.mulf %bjk_alpha, %aik : f64
        %both = arith.addf %first, %second : f64
        %c = affine.load %C[%i, %j] : memref<{N}x{N}xf64>
        %sum = arith.addf %c, %both : f64
        affine.store %sum, %C[%i, %j] : memref<{N}x{N}xf64>
      }
    }
  }
  return
}
