// fdtd-2d: TMAX steps of the 2-D finite-difference time-domain kernel on the fields ex, ey
// (electric) and hz (magnetic), with a source fict[t] on row 0 of ey (PolyBench 4.2, stencils).
//
// sizes: TMAX=500 NX=1000 NY=1200
// tiny: TMAX=4 NX=32 NY=40
// polly-best: -mllvm -polly-tile-sizes=32,32,64 -mllvm -polly-vectorizer=stripmine
//   tried (ratio to original, two runs): base 1.31x/1.20x, tile 32,32,64 + stripmine
//   1.50x/1.22x, others 1.15-1.41x
// recipe:
//   fuse %i#2 --depth 2
//   fuse %i --depth 2
//   transform %t --skew 1,1
//   transform %t --tile 64,16
//
// The recipe is time tiling: the hz sweep fused into the ex sweep shifted by one column,
// the ey sweep fused before them (they shifted by one row), i and j skewed by t, (t, i)
// tiled 64x16 with j whole, as `optimize` tiles it (the row of the source and the pieces the
// fusions peeled sunk into the tiles; a tile's i loop runs over i itself, its range moving
// with t). Tiled 64x64x256 (j too) it ran 1.86x; 64x16 ran 2.44-2.56x in quiet runs.
func.func @kernel_fdtd_2d(%ex: memref<{NX}x{NY}xf64>, %ey: memref<{NX}x{NY}xf64>,
                          %hz: memref<{NX}x{NY}xf64>, %fict: memref<{TMAX}xf64>) {
  %half = arith.constant 0.5 : f64
  %coef = arith.constant 0.7 : f64
  affine.for %t = 0 to {TMAX} {
    affine.for %j = 0 to {NY} {
      %source = affine.load %fict[%t] : memref<{TMAX}xf64>
      affine.store %source, %ey[0, %j] : memref<{NX}x{NY}xf64>
    }
    affine.for %i = 1 to {NX} {
      affine.for %j = 0 to {NY} {
        %e = affine.load %ey[%i, %j] : memref<{NX}x{NY}xf64>
        %h = affine.load %hz[%i, %j] : memref<{NX}x{NY}xf64>
        %h_up = affine.load %hz[%i - 1, %j] : memref<{NX}x{NY}xf64>
        %diff = arith.subf %h, %h_up : f64
        %step = arith.mulf %half, %diff : f64
        %value = arith.subf %e, %step : f64
        affine.store %value, %ey[%i, %j] : memref<{NX}x{NY}xf64>
      }
    }
    affine.for %i = 0 to {NX} {
      affine.for %j = 1 to {NY} {
        %e = affine.load %ex[%i, %j] : memref<{NX}x{NY}xf64>
        %h = affine.load %hz[%i, %j] : memref<{NX}x{NY}xf64>
        %h_left = affine.load %hz[%i, %j - 1] : memref<{NX}x{NY}xf64>
        %diff = arith.subf %h, %h_left : f64
        %step = arith.mulf %half, %diff : f64
        %value = arith.subf %e, %step : f64
        affine.store %value, %ex[%i, %j] : memref<{NX}x{NY}xf64>
      }
    }
    affine.for %i = 0 to {NX-1} {
      affine.for %j = 0 to {NY-1} {
        %h = affine.load %hz[%i, %j] : memref<{NX}x{NY}xf64>
        %ex_right = affine.load %ex[%i, %j + 1] : memref<{NX}x{NY}xf64>
        %ex_here = affine.load %ex[%i, %j] : memref<{NX}x{NY}xf64>
        %dx = arith.subf %ex_right, %ex_here : f64
        %ey_down = affine.load %ey[%i + 1, %j] : memref<{NX}x{NY}xf64>
        %sum = arith.addf %dx, %ey_down : f64
        %ey_here = affine.load %ey[%i, %j] : memref<{NX}x{NY}xf64>
        %curl = arith.subf %sum, %ey_here : f64
        %step = arith.mulf %coef, %curl : f64
        %value = arith.subf %h, %step : f64
        affine.store %value, %hz[%i, %j] : memref<{NX}x{NY}xf64>
      }
    }
  }
  return
}
