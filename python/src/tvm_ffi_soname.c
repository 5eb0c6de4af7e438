/* The fixed part of libtvm_ffi.so, the library tether ships for native code
 * built for apache-tvm-ffi's libtvm_ffi.so: programs linked with -ltvm_ffi
 * (tvm-ffi-config's --libs while tether serves as tvm_ffi) and libraries
 * that have it as a NEEDED entry (Apache TVM's libtvm_runtime). Its SONAME
 * is libtvm_ffi.so and it is a filter on libtether_core.so: the generated
 * placeholders (tvm_ffi_filter_stubs.sh) give the linker the core's symbol
 * names, and the dynamic linker resolves each of them in the core, so every
 * such program binds to tether's one core. */
int tether_tvm_ffi_soname_library(void) { return 1; }
