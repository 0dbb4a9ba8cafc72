// heat-3d: T time steps of the 7-point heat equation stencil in 3-D, A -> B then B -> A
// (PolyBench 4.2, stencils).
//
// sizes: T=160 N=122
// tiny: T=2 N=18
// polly-best: -mllvm -polly-vectorizer=stripmine
//   tried (ratio to original, two runs): base 0.66x/0.62x, stripmine 0.98x/0.93x, others
//   0.5-0.86x
// recipe:
//   fuse %i
//   transform %t --skew 2,2,2
//   transform %t --tile 16,32,32
//
// The recipe is time tiling: the two sweeps fused with the second shifted by one along i and
// j, i, j and k skewed by 2t, (t, i, j) tiled 16x32x32 with k whole (the pieces the fusion
// peeled join the tiles; a tile's j loop runs over j itself). In quiet runs 1.9-2.0x
// (8x32x32: 1.8x; 8x16x64, 4x32x32, 16x32x64: 1.6-1.7x; 16x16x8 and 32x32x32 are refused,
// too complex to analyse in time).
func.func @kernel_heat_3d(%A: memref<{N}x{N}x{N}xf64>, %B: memref<{N}x{N}x{N}xf64>) {
  %eighth = arith.constant 0.125 : f64
  %two = arith.constant 2.0 : f64
  affine.for %t = 1 to {T+1} {
    affine.for %i = 1 to {N-1} {
      affine.for %j = 1 to {N-1} {
        affine.for %k = 1 to {N-1} {
          %c = affine.load %A[%i, %j, %k] : memref<{N}x{N}x{N}xf64>
          %twice = arith.mulf %two, %c : f64
          %ip = affine.load %A[%i + 1, %j, %k] : memref<{N}x{N}x{N}xf64>
          %im = affine.load %A[%i - 1, %j, %k] : memref<{N}x{N}x{N}xf64>
          %di1 = arith.subf %ip, %twice : f64
          %di2 = arith.addf %di1, %im : f64
          %di = arith.mulf %eighth, %di2 : f64
          %jp = affine.load %A[%i, %j + 1, %k] : memref<{N}x{N}x{N}xf64>
          %jm = affine.load %A[%i, %j - 1, %k] : memref<{N}x{N}x{N}xf64>
          %dj1 = arith.subf %jp, %twice : f64
          %dj2 = arith.addf %dj1, %jm : f64
          %dj = arith.mulf %eighth, %dj2 : f64
          %kp = affine.load %A[%i, %j, %k + 1] : memref<{N}x{N}x{N}xf64>
          %km = affine.load %A[%i, %j, %k - 1] : memref<{N}x{N}x{N}xf64>
          %dk1 = arith.subf %kp, %twice : f64
          %dk2 = arith.addf %dk1, %km : f64
          %dk = arith.mulf %eighth, %dk2 : f64
          %sum1 = arith.addf %di, %dj : f64
          %sum2 = arith.addf %sum1, %dk : f64
          %value = arith.addf %sum2, %c : f64
          affine.store %value, %B[%i, %j, %k] : memref<{N}x{N}x{N}xf64>
        }
      }
    }
    affine.for %i = 1 to {N-1} {
      affine.for %j = 1 to {N-1} {
        affine.for %k = 1 to {N-1} {
          %c = affine.load %B[%i, %j, %k] : memref<{N}x{N}x{N}xf64>
          %twice = arith.mulf %two, %c : f64
          %ip = affine.load %B[%i + 1, %j, %k] : memref<{N}x{N}x{N}xf64>
          %im = affine.load %B[%i - 1, %j, %k] : memref<{N}x{N}x{N}xf64>
          %di1 = arith.subf %ip, %twice : f64
          %di2 = arith.addf %di1, %im : f64
          %di = arith.mulf %eighth, %di2 : f64
          %jp = affine.load %B[%i, %j + 1, %k] : memref<{N}x{N}x{N}xf64>
          %jm = affine.load %B[%i, %j - 1, %k] : memref<{N}x{N}x{N}xf64>
          %dj1 = arith.subf %jp, %twice : f64
          %dj2 = arith.addf %dj1, %jm : f64
          %dj = arith.mulf %eighth, %dj2 : f64
          %kp = affine.load %B[%i, %j, %k + 1] : memref<{N}x{N}x{N}xf64>
          %km = affine.load %B[%i, %j, %k - 1] : memref<{N}x{N}x{N}xf64>
          %dk1 = arith.subf %kp, %twice : f64
          %dk2 = arith.addf %dk1, %km : f64
          %dk = arith.mulf %eighth, %dk2 : f64
          %sum1 = arith.addf %di, %dj : f64
          %sum2 = arith.addf %sum1, %dk : f64
          %value = arith.addf %sum2, %c : f64
          affine.store %value, %A[%i, %j, %k] : memref<{N}x{N}x{N}xf64>
        }
      }
    }
  }
  return
}
