# apache-tvm-ffi's functions for embedding CUDA binaries into a library
# (add_tvm_ffi_cubin, add_tvm_ffi_fatbin, tvm_ffi_embed_bin_into). tether
# builds C and C++ only: the names exist so a project that defines them
# conditionally still configures, and a call stops with the reason.

function (_tether_no_cuda_binaries name)
  message(
    FATAL_ERROR
      "${name}: tether's tvm_ffi package does not build or embed CUDA binaries "
      "(cubin/fatbin); build this target against apache-tvm-ffi."
  )
endfunction ()

function (add_tvm_ffi_cubin)
  _tether_no_cuda_binaries(add_tvm_ffi_cubin)
endfunction ()

function (add_tvm_ffi_fatbin)
  _tether_no_cuda_binaries(add_tvm_ffi_fatbin)
endfunction ()

function (tvm_ffi_embed_bin_into)
  _tether_no_cuda_binaries(tvm_ffi_embed_bin_into)
endfunction ()
