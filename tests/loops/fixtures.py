"""Programs the loop transformation tests share."""

STENCIL = """func.func @stencil(%A: memref<10x10xf32>) {
  %c3 = arith.constant 3.0 : f32
  affine.for %i = 1 to 10 {
    affine.for %j = 0 to 9 {
      %v = affine.load %A[%i - 1, %j + 1] : memref<10x10xf32>
      %w = arith.mulf %c3, %v : f32
      affine.store %w, %A[%i, %j] : memref<10x10xf32>
    }
  }
  return
}
"""

MATMUL = """// C += A * B
func.func @matmul(%A: memref<64x32xf32>, %B: memref<32x48xf32>, %C: memref<64x48xf32>, %n: index) {
  affine.for %i = 0 to %n {
    affine.for %j = 0 to 48 {
      // the reduction
      affine.for %k = 0 to 32 {
        %a = affine.load %A[%i, %k] : memref<64x32xf32>
        %b = affine.load %B[%k, %j] : memref<32x48xf32>
        %c = affine.load %C[%i, %j] : memref<64x48xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %c, %p : f32
        affine.store %s, %C[%i, %j] : memref<64x48xf32>
      }
    }
  }
  return
}
"""

TRIANGLE = """func.func @triangle(%A: memref<16x16xf32>, %B: memref<16x16xf32>) {
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i) {
      %v = affine.load %A[%i, %j] : memref<16x16xf32>
      affine.store %v, %B[%j, %i] : memref<16x16xf32>
    }
  }
  return
}
"""

REDUCE = """func.func @reduce(%A: memref<100xf32>, %out: memref<2xf32>, %n: index) {
  %zero = arith.constant 0.0 : f32
  %sum, %max = affine.for %i = 0 to %n iter_args(%s = %zero, %m = %zero) -> (f32, f32) {
    %v = affine.load %A[%i] : memref<100xf32>
    %s2 = arith.addf %s, %v : f32
    %m2 = arith.maximumf %m, %v : f32
    affine.yield %s2, %m2 : f32, f32
  }
  affine.store %sum, %out[0] : memref<2xf32>
  affine.store %max, %out[1] : memref<2xf32>
  return
}
"""

BODY = """func.func @body(%A: memref<32xf32>, %B: memref<32xf32>, %C: memref<32xf32>, %x: f32) {
  affine.for %i = 1 to 32 {
    // scale
    %t = arith.mulf %x, %x : f32
    %a = affine.load %A[%i] : memref<32xf32>
    %y = arith.addf %a, %t : f32
    affine.store %y, %B[%i] : memref<32xf32>
    %b = affine.load %B[%i - 1] : memref<32xf32>
    affine.store %b, %C[%i] : memref<32xf32>
  }
  return
}
"""

# MATMUL tiled 4x4x4: the tile sizes divide none of the trip counts (10, 11, 9), so
# every point loop ends at a min.
TILED = """#start = affine_map<(d0) -> (d0)>
#i_end = affine_map<(d0) -> (d0 + 4, 10)>
#j_end = affine_map<(d0) -> (d0 + 4, 11)>
#k_end = affine_map<(d0) -> (d0 + 4, 9)>
func.func @gemm(%A: memref<10x9xf32>, %B: memref<9x11xf32>, %C: memref<10x11xf32>) {
  affine.for %i_tile = 0 to 10 step 4 {
    affine.for %j_tile = 0 to 11 step 4 {
      affine.for %k_tile = 0 to 9 step 4 {
        affine.for %i = #start(%i_tile) to min #i_end(%i_tile) {
          affine.for %j = #start(%j_tile) to min #j_end(%j_tile) {
            affine.for %k = #start(%k_tile) to min #k_end(%k_tile) {
              %a = affine.load %A[%i, %k] : memref<10x9xf32>
              %b = affine.load %B[%k, %j] : memref<9x11xf32>
              %c = affine.load %C[%i, %j] : memref<10x11xf32>
              %p = arith.mulf %a, %b : f32
              %s = arith.addf %c, %p : f32
              affine.store %s, %C[%i, %j] : memref<10x11xf32>
            }
          }
        }
      }
    }
  }
  return
}
"""

# A triangular tile: the point loop starts at a max and ends at a min.
TRIANGLE_TILE = """#lower = affine_map<(d0, d1) -> (d0, d1)>
#upper = affine_map<(d0)[s0] -> (d0 + 16, s0)>
func.func @tri(%A: memref<64x64xf32>, %n: index) {
  affine.for %ii = 0 to 64 step 16 {
    affine.for %j = 0 to 64 {
      affine.for %i = max #lower(%ii, %j) to min #upper(%ii)[%n] {
        %v = affine.load %A[%i, %j] : memref<64x64xf32>
        %w = arith.addf %v, %v : f32
        affine.store %w, %A[%i, %j] : memref<64x64xf32>
      }
    }
  }
  return
}
"""
