// covariance: cov := the covariance of the M columns of data (N observations), data
// centred in place, cov symmetric (PolyBench 4.2, datamining).
//
// sizes: M=1200 N=1400
// tiny: M=60 N=80
// polly-best: -mllvm -polly-vectorizer=stripmine
//   tried (ratio to original, two runs): base 3.7x/4.2x, stripmine 9.2x/8.9x, tile 32,32,64 +
//   stripmine 8.2x
// recipe:
//   transform %j#3 --distribute
//   transform %j#4 --interchange
//   transform %i#3 --distribute
//   transform %i#4 --tile 40,100,240
//   transform %k --unroll-jam 4
//   transform %j --distribute
//   transform %j#2 --interchange
//
// cov: its j loop distributed (zeroing, the k sum, the scaling), (j, k) interchanged so that j
// is unit-stride, the i loop distributed, the triangular (i, k, j) band tiled 40x100x240 and
// k unrolled and jammed by 4; the means: distributed and interchanged (rows of data in turn).
func.func @kernel_covariance(%float_n: f64, %data: memref<{N}x{M}xf64>,
                             %cov: memref<{M}x{M}xf64>, %mean: memref<{M}xf64>) {
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  affine.for %j = 0 to {M} {
    affine.store %zero, %mean[%j] : memref<{M}xf64>
    affine.for %i = 0 to {N} {
      %m = affine.load %mean[%j] : memref<{M}xf64>
      %d = affine.load %data[%i, %j] : memref<{N}x{M}xf64>
      %sum = arith.addf %m, %d : f64
      affine.store %sum, %mean[%j] : memref<{M}xf64>
    }
    %total = affine.load %mean[%j] : memref<{M}xf64>
    %average = arith.divf %total, %float_n : f64
    affine.store %average, %mean[%j] : memref<{M}xf64>
  }
  affine.for %i = 0 to {N} {
    affine.for %j = 0 to {M} {
      %d = affine.load %data[%i, %j] : memref<{N}x{M}xf64>
      %m = affine.load %mean[%j] : memref<{M}xf64>
      %centred = arith.subf %d, %m : f64
      affine.store %centred, %data[%i, %j] : memref<{N}x{M}xf64>
    }
  }
  affine.for %i = 0 to {M} {
    affine.for %j = affine_map<(d0) -> (d0)>(%i) to {M} {
      affine.store %zero, %cov[%i, %j] : memref<{M}x{M}xf64>
      affine.for %k = 0 to {N} {
        %dki = affine.load %data[%k, %i] : memref<{N}x{M}xf64>
        %dkj = affine.load %data[%k, %j] : memref<{N}x{M}xf64>
        %product = arith.mulf %dki, %dkj : f64
        %c = affine.load %cov[%i, %j] : memref<{M}x{M}xf64>
        %sum = arith.addf %c, %product : f64
        affine.store %sum, %cov[%i, %j] : memref<{M}x{M}xf64>
      }
      %c = affine.load %cov[%i, %j] : memref<{M}x{M}xf64>
      %n_minus_one = arith.subf %float_n, %one : f64
      %scaled = arith.divf %c, %n_minus_one : f64
      affine.store %scaled, %cov[%i, %j] : memref<{M}x{M}xf64>
      affine.store %scaled, %cov[%j, %i] : memref<{M}x{M}xf64>
    }
  }
  return
}
