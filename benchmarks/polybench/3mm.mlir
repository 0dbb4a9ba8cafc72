// 3mm: G := (A*B)*(C*D), through E := A*B and F := C*D (PolyBench 4.2, kernels).
//
// sizes: NI=480 NJ=720 NK=800 NL=600 NM=960
// tiny: NI=60 NJ=60 NK=40 NL=60 NM=60
// polly-best: -mllvm -polly-2nd-level-tiling
//   tried (ratio to original, two runs): base 4.7x/6.3x, stripmine 8.2x/10.1x, 2nd-level tiling
//   10.5x/14.6x
// recipe:
//   transform %j#3 --distribute
//   transform %i#3 --distribute
//   transform %j#4 --interchange
//   transform %i#4 --tile 32,64
//   transform %i#4 --unroll-jam 4
//   transform %k#3 --unroll-jam 4
//   transform %j#4 --scalar-replace
//   transform %j#2 --distribute
//   transform %i#2 --distribute
//   transform %j#3 --interchange
//   transform %i#3 --tile 32,64
//   transform %i#3 --unroll-jam 4
//   transform %k#2 --unroll-jam 4
//   transform %j#3 --scalar-replace
//   transform %j --distribute
//   transform %i --distribute
//   transform %j#2 --interchange
//   transform %i#2 --tile 32,64
//   transform %i#2 --unroll-jam 4
//   transform %k --unroll-jam 4
//   transform %j#2 --scalar-replace
//
// Each product, last first (so that the names of the earlier ones stay valid): its
// initialisation distributed out, (i, k) tiled 32x64 with j whole (64 divides neither 800
// nor 720: the last tile of k is partial, its bounds end in a `min`), and a 4x4 register
// tile (i by 4, then k by 4, unrolled and jammed in the partial tiles too) around the
// unit-stride j loop, whose copies then keep each element of the product they update in a
// register within an iteration (scalar replacement: clang cannot drop the copies' loads and
// stores itself, the arrays may alias; `optimize`'s products ran 16.0x the original without
// it, 24.8x with it). Before it, against the tiles that divide the trip counts (60x60x120
// with a 2x4 register tile), interleaved in one run under load: 22.1x against 18.2x (Polly
// best 16.3x). A 2x8 register tile in tiles of 32x64x128 ran 12.6x where 4x4 ran 14.3x (each
// element of the product updated 8 times one after the other in an iteration, not 4).
// `optimize` now takes 4x4 register tiles too (docs/optimize.md, register tile).
func.func @kernel_3mm(%E: memref<{NI}x{NJ}xf64>, %A: memref<{NI}x{NK}xf64>,
                      %B: memref<{NK}x{NJ}xf64>, %F: memref<{NJ}x{NL}xf64>,
                      %C: memref<{NJ}x{NM}xf64>, %D: memref<{NM}x{NL}xf64>,
                      %G: memref<{NI}x{NL}xf64>) {
  %zero = arith.constant 0.0 : f64
  affine.for %i = 0 to {NI} {
    affine.for %j = 0 to {NJ} {
      affine.store %zero, %E[%i, %j] : memref<{NI}x{NJ}xf64>
      affine.for %k = 0 to {NK} {
        %a = affine.load %A[%i, %k] : memref<{NI}x{NK}xf64>
        %b = affine.load %B[%k, %j] : memref<{NK}x{NJ}xf64>
        %product = arith.mulf %a, %b : f64
        %e = affine.load %E[%i, %j] : memref<{NI}x{NJ}xf64>
        %sum = arith.addf %e, %product : f64
        affine.store %sum, %E[%i, %j] : memref<{NI}x{NJ}xf64>
      }
    }
  }
  affine.for %i = 0 to {NJ} {
    affine.for %j = 0 to {NL} {
      affine.store %zero, %F[%i, %j] : memref<{NJ}x{NL}xf64>
      affine.for %k = 0 to {NM} {
        %c = affine.load %C[%i, %k] : memref<{NJ}x{NM}xf64>
        %d = affine.load %D[%k, %j] : memref<{NM}x{NL}xf64>
        %product = arith.mulf %c, %d : f64
        %f = affine.load %F[%i, %j] : memref<{NJ}x{NL}xf64>
        %sum = arith.addf %f, %product : f64
        affine.store %sum, %F[%i, %j] : memref<{NJ}x{NL}xf64>
      }
    }
  }
  affine.for %i = 0 to {NI} {
    affine.for %j = 0 to {NL} {
      affine.store %zero, %G[%i, %j] : memref<{NI}x{NL}xf64>
      affine.for %k = 0 to {NJ} {
        %e = affine.load %E[%i, %k] : memref<{NI}x{NJ}xf64>
        %f = affine.load %F[%k, %j] : memref<{NJ}x{NL}xf64>
        %product = arith.mulf %e, %f : f64
        %g = affine.load %G[%i, %j] : memref<{NI}x{NL}xf64>
        %sum = arith.addf %g, %product : f64
        affine.store %sum, %G[%i, %j] : memref<{NI}x{NL}xf64>
      }
    }
  }
  return
}
