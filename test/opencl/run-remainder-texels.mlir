// REQUIRES: opencl
// NHWC relu into an NCHW4c texture with 3, 5 and 6 channels (pad value 0). With 5 and 6
// channels a row has one whole texel and one remainder texel: vectorize-texels versions
// the texel loop on "no lane is padding", so whole texels are one vload4, the relu and
// one write_imagef, and only the remainder texel selects the pad value per lane. With 3
// channels every texel is a remainder (the per-lane test is a constant): no version.
// The results equal the numpy evaluator exactly.
// RUN: physlayout run --texture-storage image %s --entry relu_c3 --check --rtol 0 | filecheck %s
// RUN: physlayout run --texture-storage image %s --entry relu_c5 --check --rtol 0 | filecheck %s
// RUN: physlayout run --texture-storage image %s --entry relu_c6 --check --rtol 0 | filecheck %s
// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true},flatten-buffers,vectorize-texels' -t opencl | filecheck %s --check-prefix=SOURCE
// RUN: physlayout run %s --entry relu_c3 --check --rtol 0 --texture-storage buffer | filecheck %s
// RUN: physlayout run %s --entry relu_c5 --check --rtol 0 --texture-storage buffer | filecheck %s

// CHECK:      %a {{.*}} OK
// CHECK-NEXT: %b {{.*}} OK
// CHECK-NEXT: check: passed

// SOURCE-LABEL: __kernel void relu_c3(
// SOURCE-NOT:   ^ true
// SOURCE-NOT:   vload4
// SOURCE:       write_imagef(
// SOURCE-NOT:   write_imagef(
// SOURCE-LABEL: __kernel void relu_c5(
// SOURCE-COUNT-4: >= 5;
// SOURCE-COUNT-4: ^ true;
// SOURCE:         if ([[W:v[0-9]+]]) {
// SOURCE-NEXT:      float4 [[V:v]] = vload4(0, a + {{.*}});
// SOURCE-NEXT:      float4 [[Z:v[0-9]+]] = (float4)(0.0f);
// SOURCE-NEXT:      float4 [[R:r]] = ([[V]] >= [[Z]] || [[V]] != [[V]]) ? [[V]] : [[Z]];
// SOURCE-NEXT:      write_imagef(b, (int2)(p3, {{.*}}), [[R]]);
// SOURCE-NEXT:    } else {
// SOURCE-COUNT-4: ? 0.0f :
// SOURCE:           write_imagef(
// SOURCE-NOT:     write_imagef(
// SOURCE-LABEL: __kernel void relu_c6(
// SOURCE-COUNT-4: >= 6;
// SOURCE:         if ([[W:v[0-9]+]]) {
// SOURCE-NEXT:      float4 [[V:v]] = vload4(0, a + {{.*}});
// SOURCE:           write_imagef(
// SOURCE-NEXT:    } else {
// SOURCE:           write_imagef(
// SOURCE-NOT:     write_imagef(

func.func @relu_c3(%a: !layout.buffer<2x3x5x3xf32>, %b: !layout.buffer<2x3x5x3xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant 2 : index
  %ch = arith.constant 3 : index
  %cw = arith.constant 5 : index
  %cc = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %cn step %c1 {
    scf.for %h = %c0 to %ch step %c1 {
      scf.for %w = %c0 to %cw step %c1 {
        scf.for %c = %c0 to %cc step %c1 {
          %v = layout.load %a[%n, %h, %w, %c] : !layout.buffer<2x3x5x3xf32>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%n, %h, %w, %c] : !layout.buffer<2x3x5x3xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}

func.func @relu_c5(%a: !layout.buffer<2x3x5x5xf32>, %b: !layout.buffer<2x3x5x5xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant 2 : index
  %ch = arith.constant 3 : index
  %cw = arith.constant 5 : index
  %cc = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %cn step %c1 {
    scf.for %h = %c0 to %ch step %c1 {
      scf.for %w = %c0 to %cw step %c1 {
        scf.for %c = %c0 to %cc step %c1 {
          %v = layout.load %a[%n, %h, %w, %c] : !layout.buffer<2x3x5x5xf32>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%n, %h, %w, %c] : !layout.buffer<2x3x5x5xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}

func.func @relu_c6(%a: !layout.buffer<2x3x5x6xf32>, %b: !layout.buffer<2x3x5x6xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant 2 : index
  %ch = arith.constant 3 : index
  %cw = arith.constant 5 : index
  %cc = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %cn step %c1 {
    scf.for %h = %c0 to %ch step %c1 {
      scf.for %w = %c0 to %cw step %c1 {
        scf.for %c = %c0 to %cc step %c1 {
          %v = layout.load %a[%n, %h, %w, %c] : !layout.buffer<2x3x5x6xf32>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%n, %h, %w, %c] : !layout.buffer<2x3x5x6xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}
