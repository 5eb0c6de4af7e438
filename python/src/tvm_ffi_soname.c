/* The body of libtvm_ffi.so, the library tether ships for native code that
 * was linked against apache-tvm-ffi's libtvm_ffi.so (Apache TVM's
 * libtvm_runtime has it as a NEEDED entry). It defines nothing of the ABI:
 * its SONAME is libtvm_ffi.so and it depends on libtether_core.so, so once
 * tether.provide_tvm_ffi() has loaded it, the dynamic linker takes it for
 * libtvm_ffi.so and resolves the TVMFFI* references through its dependency,
 * tether's one core. */
int tether_tvm_ffi_soname_library(void) { return 1; }
