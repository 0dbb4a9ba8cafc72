// seidel-2d: T sweeps of the 9-point Gauss-Seidel stencil, in place on A
// (PolyBench 4.2, stencils).
//
// sizes: T=40 N=2002
// tiny: T=4 N=34
// polly-best: -mllvm -polly-tile-sizes=32,32,64 -mllvm -polly-vectorizer=stripmine
//   tried (ratio to original, two runs): base 0.99x/1.07x, tile 32,32,64 + stripmine
//   1.21x/1.10x, others 1.0-1.17x
// recipe:
//   transform %t --skew 1,1
//   transform %i_skew --skew 1
//   transform %t --tile 16,32,32
//   transform %i_skew --wavefront 7
//
// The recipe is time tiling: the schedule (t, t + i, 2t + i + j) by two skews, the three
// loops tiled, and seven rows of each tile in wavefront (seven chains of adds at once).
func.func @kernel_seidel_2d(%A: memref<{N}x{N}xf64>) {
  %nine = arith.constant 9.0 : f64
  affine.for %t = 0 to {T} {
    affine.for %i = 1 to {N-1} {
      affine.for %j = 1 to {N-1} {
        %nw = affine.load %A[%i - 1, %j - 1] : memref<{N}x{N}xf64>
        %n = affine.load %A[%i - 1, %j] : memref<{N}x{N}xf64>
        %ne = affine.load %A[%i - 1, %j + 1] : memref<{N}x{N}xf64>
        %w = affine.load %A[%i, %j - 1] : memref<{N}x{N}xf64>
        %c = affine.load %A[%i, %j] : memref<{N}x{N}xf64>
        %e = affine.load %A[%i, %j + 1] : memref<{N}x{N}xf64>
        %sw = affine.load %A[%i + 1, %j - 1] : memref<{N}x{N}xf64>
        %s = affine.load %A[%i + 1, %j] : memref<{N}x{N}xf64>
        %se = affine.load %A[%i + 1, %j + 1] : memref<{N}x{N}xf64>
        %sum1 = arith.addf %nw, %n : f64
        %sum2 = arith.addf %sum1, %ne : f64
        %sum3 = arith.addf %sum2, %w : f64
        %sum4 = arith.addf %sum3, %c : f64
        %sum5 = arith.addf %sum4, %e : f64
        %sum6 = arith.addf %sum5, %sw : f64
        %sum7 = arith.addf %sum6, %s : f64
        %sum8 = arith.addf %sum7, %se : f64
        %value = arith.divf %sum8, %nine : f64
        affine.store %value, %A[%i, %j] : memref<{N}x{N}xf64>
      }
    }
  }
  return
}
