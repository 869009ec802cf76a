// Transform library used by physlayout.runtime.mlir_runner: upstream one-shot
// bufferization does not bufferize linalg.pack / linalg.unpack (mlir-opt-22), so before
// bufferizing every pack becomes tensor.pad + tensor.expand_shape + linalg.transpose and
// every unpack linalg.transpose + tensor.collapse_shape + tensor.extract_slice (+ a copy),
// with upstream's own transform ops (transform.structured.lower_pack / lower_unpack).
//   mlir-opt-22 --transform-preload-library=transform-library-paths=lower-pack-unpack.mlir --transform-interpreter
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %packs = transform.structured.match ops{["linalg.pack"]} in %root : (!transform.any_op) -> !transform.op<"linalg.pack">
    transform.foreach %packs : !transform.op<"linalg.pack"> {
    ^bb0(%pack: !transform.op<"linalg.pack">):
      %pad, %expand, %transpose = transform.structured.lower_pack %pack : (!transform.op<"linalg.pack">) -> (!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)
    }
    %unpacks = transform.structured.match ops{["linalg.unpack"]} in %root : (!transform.any_op) -> !transform.op<"linalg.unpack">
    transform.foreach %unpacks : !transform.op<"linalg.unpack"> {
    ^bb0(%unpack: !transform.op<"linalg.unpack">):
      %empty, %transpose, %collapse, %slice = transform.structured.lower_unpack %unpack : (!transform.op<"linalg.unpack">) -> (!transform.op<"tensor.empty">, !transform.op<"linalg.transpose">, !transform.op<"tensor.collapse_shape">, !transform.op<"tensor.extract_slice">)
    }
    transform.yield
  }
}
