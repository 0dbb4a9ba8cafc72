// A producer-consumer chain through a local buffer: the first nest computes
// %tmp, the second consumes it. `affine-lsp fuse --all` fuses them at depth 2,
// so each element of %tmp is produced right before it is used, and %tmp, used
// by nothing else, shrinks to a single element.
func.func @scale_and_shift(%in: memref<64x64xf32>, %out: memref<64x64xf32>) {
  %tmp = memref.alloc() : memref<64x64xf32>
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f32
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 64 {
      %x = affine.load %in[%i, %j] : memref<64x64xf32>
      %y = arith.mulf %x, %two : f32
      affine.store %y, %tmp[%i, %j] : memref<64x64xf32>
    }
  }
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 64 {
      %y = affine.load %tmp[%i, %j] : memref<64x64xf32>
      %z = arith.addf %y, %one : f32
      affine.store %z, %out[%i, %j] : memref<64x64xf32>
    }
  }
  memref.dealloc %tmp : memref<64x64xf32>
  return
}
