// The invalid-input corpus, area pass-options: bad -p pipelines and -t target options, one
// case per RUN line; each exits non-zero with one diagnostic and nothing else (no traceback).
// RUN: not physlayout-opt %s -p 'apply-layout{bogus=1}' 2>&1 | filecheck %s --check-prefix=UNKNOWN-OPTION
// RUN: not physlayout-opt %s -p 'apply-layout{rewrite-loops=maybe}' 2>&1 | filecheck %s --check-prefix=BAD-BOOL
// RUN: not physlayout-opt %s -p 'lower-layout{affine-loops=2}' 2>&1 | filecheck %s --check-prefix=INT-FOR-BOOL
// RUN: not physlayout-opt %s -p 'verify-buffers{max-image-width=-1}' 2>&1 | filecheck %s --check-prefix=NEGATIVE-WIDTH
// RUN: not physlayout-opt %s -p 'verify-buffers{max-image-height=abc}' 2>&1 | filecheck %s --check-prefix=BAD-INT
// RUN: not physlayout-opt %s -t 'opencl{max-image-width=0}' 2>&1 | filecheck %s --check-prefix=TARGET-ZERO-WIDTH
// RUN: not physlayout-opt %s -t 'opencl{fp16=yes}' 2>&1 | filecheck %s --check-prefix=TARGET-BAD-BOOL
// RUN: not physlayout-opt %s -t 'opencl{colour=1}' 2>&1 | filecheck %s --check-prefix=TARGET-UNKNOWN-OPTION
// RUN: not physlayout-opt %s -t nosuchtarget 2>&1 | filecheck %s --check-prefix=UNKNOWN-TARGET
// RUN: not physlayout-opt %s -p 'annotate-texture-scope{max-image-height=-5}' 2>&1 | filecheck %s --check-prefix=ANNOTATE-HEIGHT
// RUN: not physlayout-opt %s -p 'physlayout-adreno{max-image-width=0}' 2>&1 | filecheck %s --check-prefix=ADRENO-WIDTH
// RUN: not physlayout-opt %s -p 'fold-layout-rewrites{max-constant-elements=-1}' 2>&1 | filecheck %s --check-prefix=FOLD-NEGATIVE
// RUN: not physlayout-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN-PASS
// RUN: not physlayout-opt %s -p 'apply-layout{' 2>&1 | filecheck %s --check-prefix=UNCLOSED-OPTIONS
// RUN: not physlayout-opt %s -p apply-layout,,flatten-buffers 2>&1 | filecheck %s --check-prefix=EMPTY-PASS
// RUN: not physlayout-opt %s -p 'realize-scopes{x=1}' 2>&1 | filecheck %s --check-prefix=NO-OPTIONS
// RUN: not physlayout-opt %s -p 'convert-layout{desired-layouts="conv2d=NCHW4c"}' 2>&1 | filecheck %s --check-prefix=LAYOUTS-ARITY
// RUN: not physlayout-opt %s -p 'convert-layout{desired-layouts="conv3d=NCDHW,OIDHW,NCDHW"}' 2>&1 | filecheck %s --check-prefix=LAYOUTS-KIND
// RUN: not physlayout-opt %s -p 'convert-layout{desired-layouts="conv2d=NCHW5x,OIHW,NCHW"}' 2>&1 | filecheck %s --check-prefix=LAYOUTS-SUBAXIS
// RUN: not physlayout-opt %s -p 'convert-layout{desired-layouts="conv2d=NCHW0c,OIHW,NCHW"}' 2>&1 | filecheck %s --check-prefix=LAYOUTS-ZERO-BLOCK
// RUN: not physlayout-opt %s -p 'physlayout-adreno{desired-layouts="x"}' 2>&1 | filecheck %s --check-prefix=ADRENO-LAYOUTS
// RUN: not physlayout-opt %s -p 'fold-layout-rewrites,flow-layout-rewrite' 2>&1 | filecheck %s --check-prefix=MISSPELT-PASS
// RUN: not physlayout-opt %s -p 'apply-layout{rewrite-loop}' 2>&1 | filecheck %s --check-prefix=MISSPELT-OPTION
// RUN: not xdsl-opt %s -p 'apply-layout{rewrite-loop}' 2>&1 | filecheck %s --check-prefix=STOCK-MISSPELT-OPTION
// RUN: not physlayout-opt %s -p 'canonicalize{bogus}' 2>&1 | filecheck %s --check-prefix=XDSL-PASS-OPTION
// RUN: not physlayout-opt %s -t 'opencl{fp61}' 2>&1 | filecheck %s --check-prefix=TARGET-MISSPELT-OPTION
// RUN: not physlayout-opt %s -p 'vectorize-texels{vector-width=6}' 2>&1 | filecheck %s --check-prefix=VECTOR-WIDTH
// RUN: not physlayout-opt %s -p 'physlayout-adreno{vector-width=0}' 2>&1 | filecheck %s --check-prefix=ADRENO-VECTOR-WIDTH

// UNKNOWN-OPTION: {{^}}error: invalid pass pipeline or target option: unknown option bogus; the options are rewrite-loops, remarks, strict{{$}}
// UNKNOWN-OPTION-NOT: {{.}}
// BAD-BOOL: {{^}}error: invalid pass pipeline or target option: option value 'maybe' is not true or false{{$}}
// BAD-BOOL-NOT: {{.}}
// INT-FOR-BOOL: {{^}}error: invalid pass pipeline or target option: option value 2 is not true or false{{$}}
// INT-FOR-BOOL-NOT: {{.}}
// NEGATIVE-WIDTH: {{^}}error: verify-buffers: option max-image-width must be at least 1, got -1{{$}}
// NEGATIVE-WIDTH-NOT: {{.}}
// BAD-INT: {{^}}error: invalid pass pipeline or target option: option value 'abc' is not an integer{{$}}
// BAD-INT-NOT: {{.}}
// TARGET-ZERO-WIDTH: {{^}}error: opencl: option max-image-width must be at least 1, got 0{{$}}
// TARGET-ZERO-WIDTH-NOT: {{.}}
// TARGET-BAD-BOOL: {{^}}error: invalid pass pipeline or target option: option value 'yes' is not true or false{{$}}
// TARGET-BAD-BOOL-NOT: {{.}}
// TARGET-UNKNOWN-OPTION: {{^}}error: invalid pass pipeline or target option: unknown option colour; the options are max-image-width, max-image-height, fp16, fp64, texture-storage{{$}}
// TARGET-UNKNOWN-OPTION-NOT: {{.}}
// UNKNOWN-TARGET: physlayout-opt: error: argument -t/--target: invalid choice: 'nosuchtarget' (choose from opencl, arm-asm, csl, llvm, mlir, mps, riscv-asm, wat, wgsl, x86-asm)
// ANNOTATE-HEIGHT: {{^}}error: annotate-texture-scope: option max-image-height must be at least 1, got -5{{$}}
// ANNOTATE-HEIGHT-NOT: {{.}}
// ADRENO-WIDTH: {{^}}error: annotate-texture-scope: option max-image-width must be at least 1, got 0{{$}}
// ADRENO-WIDTH-NOT: {{.}}
// FOLD-NEGATIVE: {{^}}error: fold-layout-rewrites: option max-constant-elements must be at least 0, got -1{{$}}
// FOLD-NEGATIVE-NOT: {{.}}
// UNKNOWN-PASS: {{^}}error: invalid pass pipeline or target option: unknown pass 'no-such-pass'{{$}}
// UNKNOWN-PASS-NOT: {{.}}
// UNCLOSED-OPTIONS: {{^}}pass-pipeline:1:14: error: Expected argument name here{{$}}
// UNCLOSED-OPTIONS-NEXT: {{^}}apply-layout{{{$}}
// UNCLOSED-OPTIONS-NEXT: {{^}}             ^{{$}}
// UNCLOSED-OPTIONS-NOT: {{.}}
// EMPTY-PASS: {{^}}pass-pipeline:1:14: error: Expected pass name here{{$}}
// EMPTY-PASS-NEXT: {{^}}apply-layout,,flatten-buffers{{$}}
// EMPTY-PASS-NEXT: {{^}}             ^{{$}}
// EMPTY-PASS-NOT: {{.}}
// NO-OPTIONS: {{^}}error: invalid pass pipeline or target option: unknown option x; the options are none{{$}}
// NO-OPTIONS-NOT: {{.}}
// LAYOUTS-ARITY: {{^}}error: convert-layout: bad desired-layouts entry 'conv2d=NCHW4c': expected KIND=DATA,KERNEL,OUTPUT with KIND one of ['conv2d']{{$}}
// LAYOUTS-ARITY-NOT: {{.}}
// LAYOUTS-KIND: {{^}}error: convert-layout: bad desired-layouts entry 'conv3d=NCDHW,OIDHW,NCDHW': expected KIND=DATA,KERNEL,OUTPUT with KIND one of ['conv2d']{{$}}
// LAYOUTS-KIND-NOT: {{.}}
// LAYOUTS-SUBAXIS: {{^}}error: convert-layout: layout 'NCHW5x' for conv2d: sub-axis 'x' has no primal axis 'X' in layout 'NCHW5x'{{$}}
// LAYOUTS-SUBAXIS-NOT: {{.}}
// LAYOUTS-ZERO-BLOCK: {{^}}error: convert-layout: layout 'NCHW0c' for conv2d: sub-axis factor must be positive in layout 'NCHW0c'{{$}}
// LAYOUTS-ZERO-BLOCK-NOT: {{.}}
// ADRENO-LAYOUTS: {{^}}error: convert-layout: bad desired-layouts entry 'x': expected KIND=DATA,KERNEL,OUTPUT with KIND one of ['conv2d']{{$}}
// ADRENO-LAYOUTS-NOT: {{.}}
// MISSPELT-PASS: {{^}}error: invalid pass pipeline or target option: unknown pass 'flow-layout-rewrite' (did you mean 'flow-layout-rewrites'?){{$}}
// MISSPELT-PASS-NOT: {{.}}
// MISSPELT-OPTION: {{^}}error: invalid pass pipeline or target option: unknown option rewrite-loop (did you mean rewrite-loops?); the options are rewrite-loops, remarks, strict{{$}}
// MISSPELT-OPTION-NOT: {{.}}
// STOCK-MISSPELT-OPTION: ValueError: unknown option rewrite-loop (did you mean rewrite-loops?); the options are rewrite-loops, remarks, strict
// XDSL-PASS-OPTION: {{^}}error: invalid pass pipeline or target option: unknown option bogus; the options are none{{$}}
// XDSL-PASS-OPTION-NOT: {{.}}
// TARGET-MISSPELT-OPTION: {{^}}error: invalid pass pipeline or target option: unknown option fp61 (did you mean fp64?); the options are max-image-width, max-image-height, fp16, fp64, texture-storage{{$}}
// VECTOR-WIDTH: {{^}}error: vectorize-texels: option vector-width must be a power of two, got 6{{$}}
// VECTOR-WIDTH-NOT: {{.}}
// ADRENO-VECTOR-WIDTH: {{^}}error: vectorize-texels: option vector-width must be a power of two, got 0{{$}}
// ADRENO-VECTOR-WIDTH-NOT: {{.}}
// TARGET-MISSPELT-OPTION-NOT: {{.}}
func.func @conv8(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) outs(%f : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %c : tensor<1x8x4x4xf32>
}

