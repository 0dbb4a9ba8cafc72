// gemm: C := alpha*A*B + beta*C, A of NIxNK, B of NKxNJ (PolyBench 4.2, blas).
//
// sizes: NI=1200 NJ=1440 NK=1500
// tiny: NI=60 NJ=120 NK=60
// polly-best: -mllvm -polly-tile-sizes=32,32,64 -mllvm -polly-vectorizer=stripmine
//   tried (ratio to original, two runs): base 0.39x/0.44x, stripmine 0.97x/1.21x, tile 32,32,64
//   + stripmine 0.99x/1.16x
// recipe:
//   transform %i --distribute
//   transform %i#2 --tile 60,60,120
//   transform %i#2 --unroll-jam 2
//   transform %k --unroll-jam 4
//   transform %j#2 --scalar-replace
//
// C *= beta distributed out, (i, k, j) tiled 60x60x120 (divisors of 1200, 1500, 1440), and a
// 2x4 register tile (i by 2, then k by 4) around the unit-stride j loop, whose copies keep
// each element of C they update in a register within an iteration (scalar replacement).
func.func @kernel_gemm(%alpha: f64, %beta: f64, %C: memref<{NI}x{NJ}xf64>,
                       %A: memref<{NI}x{NK}xf64>, %B: memref<{NK}x{NJ}xf64>) {
  affine.for %i = 0 to {NI} {
    affine.for %j = 0 to {NJ} {
      %c = affine.load %C[%i, %j] : memref<{NI}x{NJ}xf64>
      %scaled = arith.mulf %c, %beta : f64
      affine.store %scaled, %C[%i, %j] : memref<{NI}x{NJ}xf64>
    }
    affine.for %k = 0 to {NK} {
      affine.for %j = 0 to {NJ} {
        %a = affine.load %A[%i, %k] : memref<{NI}x{NK}xf64>
        %alpha_a = arith.mulf %alpha, %a : f64
        %b = affine.load %B[%k, %j] : memref<{NK}x{NJ}xf64>
        %product = arith.mulf %alpha_a, %b : f64
        %c = affine.load %C[%i, %j] : memref<{NI}x{NJ}xf64>
        %sum = arith.addf %c, %product : f64
        affine.store %sum, %C[%i, %j] : memref<{NI}x{NJ}xf64>
      }
    }
  }
  return
}
