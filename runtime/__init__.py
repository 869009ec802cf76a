"""Execution on a device: compiled kernels and host functions run on OpenCL (pyopencl), and
the end-to-end demo of `physlayout demo`."""
