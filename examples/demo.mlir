// physlayout demo (Adreno-style): an NHWC input becomes an NCHW4c texture (a layout
// transform kernel), relu runs on the texture, and conv2d reads texture activations and
// OIHW4o global weights and writes an NCHW4c texture. Every buffer is written against its
// LOGICAL layout (NHWC activations, OIHW weights); the physical layouts and memory scopes
// are the schedule, in the buffer types.

func.func @to_nchw4c(%x: !layout.buffer<1x16x16x16xf32>, %t: !layout.buffer<1x16x16x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c16 step %c1 {
      scf.for %w = %c0 to %c16 step %c1 {
        scf.for %c = %c0 to %c16 step %c1 {
          %v = layout.load %x[%n, %h, %w, %c] : !layout.buffer<1x16x16x16xf32>, f32
          layout.store %v, %t[%n, %h, %w, %c] : !layout.buffer<1x16x16x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}

func.func @relu(%a: !layout.buffer<1x16x16x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %b: !layout.buffer<1x16x16x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c16 step %c1 {
      scf.for %w = %c0 to %c16 step %c1 {
        scf.for %c = %c0 to %c16 step %c1 {
          %v = layout.load %a[%n, %h, %w, %c] : !layout.buffer<1x16x16x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%n, %h, %w, %c] : !layout.buffer<1x16x16x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}

func.func @conv2d(%a: !layout.buffer<1x16x16x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %f: !layout.buffer<16x16x3x3xf32, transform = #layout.index_map<(o, i, kh, kw) -> (o floordiv 4, i, kh, kw, o mod 4)>>, %y: !layout.buffer<1x14x14x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c14 = arith.constant 14 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %oh = %c0 to %c14 step %c1 {
      scf.for %ow = %c0 to %c14 step %c1 {
        scf.for %k = %c0 to %c16 step %c1 {
          %acc = scf.for %ci = %c0 to %c16 step %c1 iter_args(%s0 = %zero) -> (f32) {
            %s3 = scf.for %r = %c0 to %c3 step %c1 iter_args(%s1 = %s0) -> (f32) {
              %s4 = scf.for %s = %c0 to %c3 step %c1 iter_args(%s2 = %s1) -> (f32) {
                %ih = arith.addi %oh, %r : index
                %iw = arith.addi %ow, %s : index
                %av = layout.load %a[%n, %ih, %iw, %ci] : !layout.buffer<1x16x16x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
                %fv = layout.load %f[%k, %ci, %r, %s] : !layout.buffer<16x16x3x3xf32, transform = #layout.index_map<(o, i, kh, kw) -> (o floordiv 4, i, kh, kw, o mod 4)>>, f32
                %p = arith.mulf %av, %fv : f32
                %sum = arith.addf %s2, %p : f32
                scf.yield %sum : f32
              }
              scf.yield %s4 : f32
            }
            scf.yield %s3 : f32
          }
          layout.store %acc, %y[%n, %oh, %ow, %k] : !layout.buffer<1x14x14x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}

func.func @main(%x: !layout.buffer<1x16x16x16xf32>, %f: !layout.buffer<16x16x3x3xf32, transform = #layout.index_map<(o, i, kh, kw) -> (o floordiv 4, i, kh, kw, o mod 4)>>, %y: !layout.buffer<1x14x14x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">) {
  %p1 = layout.allocate [1, 16, 16, 16] : !layout.ptr<f32, scope = "global.texture">
  %t1 = layout.decl_buffer %p1 : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<1x16x16x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">
  %p2 = layout.allocate [1, 16, 16, 16] : !layout.ptr<f32, scope = "global.texture">
  %t2 = layout.decl_buffer %p2 : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<1x16x16x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">
  func.call @to_nchw4c(%x, %t1) : (!layout.buffer<1x16x16x16xf32>, !layout.buffer<1x16x16x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">) -> ()
  func.call @relu(%t1, %t2) : (!layout.buffer<1x16x16x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, !layout.buffer<1x16x16x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">) -> ()
  func.call @conv2d(%t2, %f, %y) : (!layout.buffer<1x16x16x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, !layout.buffer<16x16x3x3xf32, transform = #layout.index_map<(o, i, kh, kw) -> (o floordiv 4, i, kh, kw, o mod 4)>>, !layout.buffer<1x14x14x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">) -> ()
  func.return
}
