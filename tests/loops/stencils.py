"""Programs the generated-code transformations (skews, time tiles, wavefronts,
tiles of imperfect bands) are tried on: PolyBench's stencils, small."""

SEIDEL = """func.func @seidel(%A: memref<12x12xf64>) {
  %c9 = arith.constant 9.0 : f64
  affine.for %t = 0 to 4 {
    affine.for %i = 1 to 11 {
      affine.for %j = 1 to 11 {
        %a0 = affine.load %A[%i - 1, %j - 1] : memref<12x12xf64>
        %a1 = affine.load %A[%i - 1, %j] : memref<12x12xf64>
        %a2 = affine.load %A[%i - 1, %j + 1] : memref<12x12xf64>
        %a3 = affine.load %A[%i, %j - 1] : memref<12x12xf64>
        %a4 = affine.load %A[%i, %j] : memref<12x12xf64>
        %a5 = affine.load %A[%i, %j + 1] : memref<12x12xf64>
        %a6 = affine.load %A[%i + 1, %j - 1] : memref<12x12xf64>
        %a7 = affine.load %A[%i + 1, %j] : memref<12x12xf64>
        %a8 = affine.load %A[%i + 1, %j + 1] : memref<12x12xf64>
        %s1 = arith.addf %a0, %a1 : f64
        %s2 = arith.addf %s1, %a2 : f64
        %s3 = arith.addf %s2, %a3 : f64
        %s4 = arith.addf %s3, %a4 : f64
        %s5 = arith.addf %s4, %a5 : f64
        %s6 = arith.addf %s5, %a6 : f64
        %s7 = arith.addf %s6, %a7 : f64
        %s8 = arith.addf %s7, %a8 : f64
        %v = arith.divf %s8, %c9 : f64
        affine.store %v, %A[%i, %j] : memref<12x12xf64>
      }
    }
  }
  return
}
"""

JACOBI_1D = """// The two sweeps of a jacobi-1d step fused with a shift of one: the second
// sweep's iteration i - 1 runs with the first sweep's iteration i.
func.func @jacobi_1d(%A: memref<40xf64>, %B: memref<40xf64>) {
  %third = arith.constant 0.33333 : f64
  affine.for %t = 0 to 10 {
    affine.for %i = 1 to 40 {
      affine.if affine_set<(d0) : (38 - d0 >= 0)>(%i) {
        %a0 = affine.load %A[%i - 1] : memref<40xf64>
        %a1 = affine.load %A[%i] : memref<40xf64>
        %a2 = affine.load %A[%i + 1] : memref<40xf64>
        %s0 = arith.addf %a0, %a1 : f64
        %s1 = arith.addf %s0, %a2 : f64
        %b = arith.mulf %third, %s1 : f64
        affine.store %b, %B[%i] : memref<40xf64>
      }
      affine.if affine_set<(d0) : (d0 - 2 >= 0)>(%i) {
        // the second sweep, one iteration behind
        %b0 = affine.load %B[%i - 2] : memref<40xf64>
        %b1 = affine.load %B[%i - 1] : memref<40xf64>
        %b2 = affine.load %B[%i] : memref<40xf64>
        %r0 = arith.addf %b0, %b1 : f64
        %r1 = arith.addf %r0, %b2 : f64
        %a = arith.mulf %third, %r1 : f64
        affine.store %a, %A[%i - 1] : memref<40xf64>
      }
    }
  }
  return
}
"""

JACOBI_2D = """// The two sweeps of a jacobi-2d step fused with a shift of one along both loops.
func.func @jacobi_2d(%A: memref<14x14xf64>, %B: memref<14x14xf64>) {
  %fifth = arith.constant 0.2 : f64
  affine.for %t = 0 to 5 {
    affine.for %i = 1 to 14 {
      affine.for %j = 1 to 14 {
        affine.if affine_set<(d0, d1) : (12 - d0 >= 0, 12 - d1 >= 0)>(%i, %j) {
          %a0 = affine.load %A[%i, %j] : memref<14x14xf64>
          %a1 = affine.load %A[%i, %j - 1] : memref<14x14xf64>
          %a2 = affine.load %A[%i, %j + 1] : memref<14x14xf64>
          %a3 = affine.load %A[%i + 1, %j] : memref<14x14xf64>
          %a4 = affine.load %A[%i - 1, %j] : memref<14x14xf64>
          %s0 = arith.addf %a0, %a1 : f64
          %s1 = arith.addf %s0, %a2 : f64
          %s2 = arith.addf %s1, %a3 : f64
          %s3 = arith.addf %s2, %a4 : f64
          %b = arith.mulf %fifth, %s3 : f64
          affine.store %b, %B[%i, %j] : memref<14x14xf64>
        }
        affine.if affine_set<(d0, d1) : (d0 - 2 >= 0, d1 - 2 >= 0)>(%i, %j) {
          %b0 = affine.load %B[%i - 1, %j - 1] : memref<14x14xf64>
          %b1 = affine.load %B[%i - 1, %j - 2] : memref<14x14xf64>
          %b2 = affine.load %B[%i - 1, %j] : memref<14x14xf64>
          %b3 = affine.load %B[%i, %j - 1] : memref<14x14xf64>
          %b4 = affine.load %B[%i - 2, %j - 1] : memref<14x14xf64>
          %r0 = arith.addf %b0, %b1 : f64
          %r1 = arith.addf %r0, %b2 : f64
          %r2 = arith.addf %r1, %b3 : f64
          %r3 = arith.addf %r2, %b4 : f64
          %a = arith.mulf %fifth, %r3 : f64
          affine.store %a, %A[%i - 1, %j - 1] : memref<14x14xf64>
        }
      }
    }
  }
  return
}
"""

GEMM = """func.func @gemm(%C: memref<20x18xf64>, %A: memref<20x12xf64>, %B: memref<12x18xf64>,
                 %alpha: f64, %beta: f64) {
  affine.for %i = 0 to 20 {
    affine.for %j = 0 to 18 {
      // C[i][j] *= beta
      %c = affine.load %C[%i, %j] : memref<20x18xf64>
      %cb = arith.mulf %c, %beta : f64
      affine.store %cb, %C[%i, %j] : memref<20x18xf64>
      affine.for %k = 0 to 12 {
        %a = affine.load %A[%i, %k] : memref<20x12xf64>
        %b = affine.load %B[%k, %j] : memref<12x18xf64>
        %ab = arith.mulf %alpha, %a : f64
        %p = arith.mulf %ab, %b : f64
        %c2 = affine.load %C[%i, %j] : memref<20x18xf64>
        %s = arith.addf %c2, %p : f64
        affine.store %s, %C[%i, %j] : memref<20x18xf64>
      }
    }
  }
  return
}
"""


JACOBI_2D_PEELED = """// Two sweeps of jacobi-2d as `fuse` leaves them at depth 1: the second
// shifted by one row, the first row of one sweep and the last of the other
// peeled into loops of their own beside the fused nest.
func.func @jacobi_2d_peeled(%A: memref<10x10xf64>, %B: memref<10x10xf64>) {
  %fifth = arith.constant 0.2 : f64
  affine.for %t = 0 to 3 {
    affine.for %j = 1 to 9 {
      %centre = affine.load %A[1, %j] : memref<10x10xf64>
      %west = affine.load %A[1, %j - 1] : memref<10x10xf64>
      %east = affine.load %A[1, %j + 1] : memref<10x10xf64>
      %south = affine.load %A[2, %j] : memref<10x10xf64>
      %north = affine.load %A[0, %j] : memref<10x10xf64>
      %sum1 = arith.addf %centre, %west : f64
      %sum2 = arith.addf %sum1, %east : f64
      %sum3 = arith.addf %sum2, %south : f64
      %sum4 = arith.addf %sum3, %north : f64
      %value = arith.mulf %fifth, %sum4 : f64
      affine.store %value, %B[1, %j] : memref<10x10xf64>
    }
    affine.for %i = 2 to 9 {
      affine.for %j = 1 to 9 {
        %centre = affine.load %A[%i, %j] : memref<10x10xf64>
        %west = affine.load %A[%i, %j - 1] : memref<10x10xf64>
        %east = affine.load %A[%i, %j + 1] : memref<10x10xf64>
        %south = affine.load %A[%i + 1, %j] : memref<10x10xf64>
        %north = affine.load %A[%i - 1, %j] : memref<10x10xf64>
        %sum1 = arith.addf %centre, %west : f64
        %sum2 = arith.addf %sum1, %east : f64
        %sum3 = arith.addf %sum2, %south : f64
        %sum4 = arith.addf %sum3, %north : f64
        %value = arith.mulf %fifth, %sum4 : f64
        affine.store %value, %B[%i, %j] : memref<10x10xf64>
      }
      affine.for %j = 1 to 9 {
        %centre = affine.load %B[%i - 1, %j] : memref<10x10xf64>
        %west = affine.load %B[%i - 1, %j - 1] : memref<10x10xf64>
        %east = affine.load %B[%i - 1, %j + 1] : memref<10x10xf64>
        %south = affine.load %B[%i, %j] : memref<10x10xf64>
        %north = affine.load %B[%i - 2, %j] : memref<10x10xf64>
        %sum1 = arith.addf %centre, %west : f64
        %sum2 = arith.addf %sum1, %east : f64
        %sum3 = arith.addf %sum2, %south : f64
        %sum4 = arith.addf %sum3, %north : f64
        %value = arith.mulf %fifth, %sum4 : f64
        affine.store %value, %A[%i - 1, %j] : memref<10x10xf64>
      }
    }
    affine.for %j = 1 to 9 {
      %centre = affine.load %B[8, %j] : memref<10x10xf64>
      %west = affine.load %B[8, %j - 1] : memref<10x10xf64>
      %east = affine.load %B[8, %j + 1] : memref<10x10xf64>
      %south = affine.load %B[9, %j] : memref<10x10xf64>
      %north = affine.load %B[7, %j] : memref<10x10xf64>
      %sum1 = arith.addf %centre, %west : f64
      %sum2 = arith.addf %sum1, %east : f64
      %sum3 = arith.addf %sum2, %south : f64
      %sum4 = arith.addf %sum3, %north : f64
      %value = arith.mulf %fifth, %sum4 : f64
      affine.store %value, %A[8, %j] : memref<10x10xf64>
    }
  }
  return
}
"""

JACOBI_2D_PEELED_BOTH = """// Two sweeps of jacobi-2d as `fuse --depth 2` leaves them: the
// second shifted by one along both loops, the pieces one sweep runs alone
// peeled (rows beside the fused nest, columns beside its inner loop).
func.func @jacobi_2d_peeled_both(%A: memref<10x10xf64>, %B: memref<10x10xf64>) {
  %fifth = arith.constant 0.2 : f64
  affine.for %t = 0 to 3 {
    affine.for %j = 1 to 9 {
      %centre_4 = affine.load %A[1, %j] : memref<10x10xf64>
      %west_4 = affine.load %A[1, %j - 1] : memref<10x10xf64>
      %east_4 = affine.load %A[1, %j + 1] : memref<10x10xf64>
      %south_4 = affine.load %A[2, %j] : memref<10x10xf64>
      %north_4 = affine.load %A[0, %j] : memref<10x10xf64>
      %sum1_4 = arith.addf %centre_4, %west_4 : f64
      %sum2_4 = arith.addf %sum1_4, %east_4 : f64
      %sum3_4 = arith.addf %sum2_4, %south_4 : f64
      %sum4_4 = arith.addf %sum3_4, %north_4 : f64
      %value_4 = arith.mulf %fifth, %sum4_4 : f64
      affine.store %value_4, %B[1, %j] : memref<10x10xf64>
    }
    affine.for %i = 2 to 9 {
      %centre_2 = affine.load %A[%i, 1] : memref<10x10xf64>
      %west_2 = affine.load %A[%i, 0] : memref<10x10xf64>
      %east_2 = affine.load %A[%i, 2] : memref<10x10xf64>
      %south_2 = affine.load %A[%i + 1, 1] : memref<10x10xf64>
      %north_2 = affine.load %A[%i - 1, 1] : memref<10x10xf64>
      %sum1_2 = arith.addf %centre_2, %west_2 : f64
      %sum2_2 = arith.addf %sum1_2, %east_2 : f64
      %sum3_2 = arith.addf %sum2_2, %south_2 : f64
      %sum4_2 = arith.addf %sum3_2, %north_2 : f64
      %value_2 = arith.mulf %fifth, %sum4_2 : f64
      affine.store %value_2, %B[%i, 1] : memref<10x10xf64>
      affine.for %j = 2 to 9 {
        %centre = affine.load %A[%i, %j] : memref<10x10xf64>
        %west = affine.load %A[%i, %j - 1] : memref<10x10xf64>
        %east = affine.load %A[%i, %j + 1] : memref<10x10xf64>
        %south = affine.load %A[%i + 1, %j] : memref<10x10xf64>
        %north = affine.load %A[%i - 1, %j] : memref<10x10xf64>
        %sum1 = arith.addf %centre, %west : f64
        %sum2 = arith.addf %sum1, %east : f64
        %sum3 = arith.addf %sum2, %south : f64
        %sum4 = arith.addf %sum3, %north : f64
        %value = arith.mulf %fifth, %sum4 : f64
        affine.store %value, %B[%i, %j] : memref<10x10xf64>
        %centre_1 = affine.load %B[%i - 1, %j - 1] : memref<10x10xf64>
        %west_1 = affine.load %B[%i - 1, %j - 2] : memref<10x10xf64>
        %east_1 = affine.load %B[%i - 1, %j] : memref<10x10xf64>
        %south_1 = affine.load %B[%i, %j - 1] : memref<10x10xf64>
        %north_1 = affine.load %B[%i - 2, %j - 1] : memref<10x10xf64>
        %sum1_1 = arith.addf %centre_1, %west_1 : f64
        %sum2_1 = arith.addf %sum1_1, %east_1 : f64
        %sum3_1 = arith.addf %sum2_1, %south_1 : f64
        %sum4_1 = arith.addf %sum3_1, %north_1 : f64
        %value_1 = arith.mulf %fifth, %sum4_1 : f64
        affine.store %value_1, %A[%i - 1, %j - 1] : memref<10x10xf64>
      }
      %centre_3 = affine.load %B[%i - 1, 8] : memref<10x10xf64>
      %west_3 = affine.load %B[%i - 1, 7] : memref<10x10xf64>
      %east_3 = affine.load %B[%i - 1, 9] : memref<10x10xf64>
      %south_3 = affine.load %B[%i, 8] : memref<10x10xf64>
      %north_3 = affine.load %B[%i - 2, 8] : memref<10x10xf64>
      %sum1_3 = arith.addf %centre_3, %west_3 : f64
      %sum2_3 = arith.addf %sum1_3, %east_3 : f64
      %sum3_3 = arith.addf %sum2_3, %south_3 : f64
      %sum4_3 = arith.addf %sum3_3, %north_3 : f64
      %value_3 = arith.mulf %fifth, %sum4_3 : f64
      affine.store %value_3, %A[%i - 1, 8] : memref<10x10xf64>
    }
    affine.for %j = 1 to 9 {
      %centre_4 = affine.load %B[8, %j] : memref<10x10xf64>
      %west_4 = affine.load %B[8, %j - 1] : memref<10x10xf64>
      %east_4 = affine.load %B[8, %j + 1] : memref<10x10xf64>
      %south_4 = affine.load %B[9, %j] : memref<10x10xf64>
      %north_4 = affine.load %B[7, %j] : memref<10x10xf64>
      %sum1_4 = arith.addf %centre_4, %west_4 : f64
      %sum2_4 = arith.addf %sum1_4, %east_4 : f64
      %sum3_4 = arith.addf %sum2_4, %south_4 : f64
      %sum4_4 = arith.addf %sum3_4, %north_4 : f64
      %value_4 = arith.mulf %fifth, %sum4_4 : f64
      affine.store %value_4, %A[8, %j] : memref<10x10xf64>
    }
  }
  return
}
"""

SIBLING_READ_AHEAD = """// A sibling nest whose row the nest beside it reads one column
// ahead: sunk into a band tiled along %j, it would be read before it is written.
func.func @sibling(%C: memref<12xf64>, %A: memref<12x12xf64>) {
  affine.for %t = 0 to 3 {
    affine.for %j = 0 to 12 {
      %a = affine.load %A[0, %j] : memref<12x12xf64>
      affine.store %a, %C[%j] : memref<12xf64>
    }
    affine.for %i = 1 to 12 {
      affine.for %j = 0 to 11 {
        %c = affine.load %C[%j + 1] : memref<12xf64>
        affine.store %c, %A[%i, %j] : memref<12x12xf64>
      }
    }
  }
  return
}
"""
