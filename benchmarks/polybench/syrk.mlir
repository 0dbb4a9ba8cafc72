// syrk: C := alpha*A*A^T + beta*C on the lower triangle of C, A of NxM
// (PolyBench 4.2, blas).
//
// sizes: N=1200 M=1000
// tiny: N=60 M=40
// polly-best: -mllvm -polly-register-tiling
//   tried (ratio to original, two runs): base 1.47x/1.56x, register tiling 1.92x/2.24x, others
//   0.7-1.6x
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
// registers through k (scalar replacement). In one interleaved run: 4x3 2.9x, 4x4 2.8x,
// 4x2 2.8x, 3x4 2.2x, 2x6 2.1x, 1x12 1.5x (Polly's best flags 2.0-2.3x).
func.func @kernel_syrk(%alpha: f64, %beta: f64, %C: memref<{N}x{N}xf64>,
                       %A: memref<{N}x{M}xf64>) {
  affine.for %i = 0 to {N} {
    affine.for %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i) {
      %c = affine.load %C[%i, %j] : memref<{N}x{N}xf64>
      %scaled = arith.mulf %c, %beta : f64
      affine.store %scaled, %C[%i, %j] : memref<{N}x{N}xf64>
    }
    affine.for %k = 0 to {M} {
      affine.for %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i) {
        %aik = affine.load %A[%i, %k] : memref<{N}x{M}xf64>
        %alpha_a = arith.mulf %alpha, %aik : f64
        %ajk = affine.load %A[%j, %k] : memref<{N}x{M}xf64>
        %product = arith.mulf %alpha_a, %ajk : f64
        %c = affine.load %C[%i, %j] : memref<{N}x{N}xf64>
        %sum = arith.addf %c, %product : f64
        affine.store %sum, %C[%i, %j] : memref<{N}x{N}xf64>
      }
    }
  }
  return
}
