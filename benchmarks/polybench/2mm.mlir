// 2mm: D := alpha*A*B*C + beta*D, through tmp := alpha*A*B (PolyBench 4.2, kernels).
//
// sizes: NI=720 NJ=720 NK=840 NL=960
// tiny: NI=60 NJ=120 NK=60 NL=120
// polly-best: -mllvm -polly-tile-sizes=32,32,64 -mllvm -polly-vectorizer=stripmine
//   tried (ratio to original, two runs): base 1.9x/2.1x, stripmine 6.0x/6.7x, tile 32,32,64 +
//   stripmine 5.7x/7.4x
// recipe:
//   transform %j#2 --distribute
//   transform %i#2 --distribute
//   transform %j#3 --interchange
//   transform %i#3 --tile 60,60,120
//   transform %i#3 --unroll-jam 2
//   transform %k#2 --unroll-jam 4
//   transform %j#3 --scalar-replace
//   transform %j --distribute
//   transform %i --distribute
//   transform %j#2 --interchange
//   transform %i#2 --tile 60,60,120
//   transform %i#2 --unroll-jam 2
//   transform %k --unroll-jam 4
//   transform %j#2 --scalar-replace
//
// Each product: its initialisation distributed out, (i, k, j) tiled 60x60x120 (sizes that
// divide the trip counts), and a 2x4 register tile (i by 2, then k by 4) around the
// unit-stride j loop LLVM vectorizes, whose copies then keep each element they update in
// a register within an iteration (scalar replacement: one load and one store of it, not 4).
func.func @kernel_2mm(%alpha: f64, %beta: f64, %tmp: memref<{NI}x{NJ}xf64>,
                      %A: memref<{NI}x{NK}xf64>, %B: memref<{NK}x{NJ}xf64>,
                      %C: memref<{NJ}x{NL}xf64>, %D: memref<{NI}x{NL}xf64>) {
  %zero = arith.constant 0.0 : f64
  affine.for %i = 0 to {NI} {
    affine.for %j = 0 to {NJ} {
      affine.store %zero, %tmp[%i, %j] : memref<{NI}x{NJ}xf64>
      affine.for %k = 0 to {NK} {
        %a = affine.load %A[%i, %k] : memref<{NI}x{NK}xf64>
        %alpha_a = arith.mulf %alpha, %a : f64
        %b = affine.load %B[%k, %j] : memref<{NK}x{NJ}xf64>
        %product = arith.mulf %alpha_a, %b : f64
        %t = affine.load %tmp[%i, %j] : memref<{NI}x{NJ}xf64>
        %sum = arith.addf %t, %product : f64
        affine.store %sum, %tmp[%i, %j] : memref<{NI}x{NJ}xf64>
      }
    }
  }
  affine.for %i = 0 to {NI} {
    affine.for %j = 0 to {NL} {
      %d = affine.load %D[%i, %j] : memref<{NI}x{NL}xf64>
      %scaled = arith.mulf %d, %beta : f64
      affine.store %scaled, %D[%i, %j] : memref<{NI}x{NL}xf64>
      affine.for %k = 0 to {NJ} {
        %t = affine.load %tmp[%i, %k] : memref<{NI}x{NJ}xf64>
        %c = affine.load %C[%k, %j] : memref<{NJ}x{NL}xf64>
        %product = arith.mulf %t, %c : f64
        %acc = affine.load %D[%i, %j] : memref<{NI}x{NL}xf64>
        %sum = arith.addf %acc, %product : f64
        affine.store %sum, %D[%i, %j] : memref<{NI}x{NL}xf64>
      }
    }
  }
  return
}
