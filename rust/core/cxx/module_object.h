// tether's own minimal declaration of TVM-FFI's module object
// (tvm::ffi::ModuleObj) and of the classes in its member signatures, with
// the layout code compiled against TVM-FFI's headers relies on when it
// calls a module's virtual functions inline, subclasses ModuleObj, or
// reads its imports:
//
// * Object is the 24-byte TVMFFIObject header and has no virtual function,
//   so ModuleObj (which has) starts with its vtable pointer and the object
//   header — the FFI handle — sits 8 bytes into it. imports_ (an
//   Array<Any>) and import_lookup_cache_ (a Map<String, Function>) follow.
// * The twelve virtual functions are declared in TVM-FFI's order; there is
//   no virtual destructor (objects are destroyed by their deleter).
// * Optional<Function>, Array<String> and Module are one object pointer;
//   Optional<String>, String and Bytes are one TVMFFIAny. All have
//   user-provided copy constructors and destructors, so they are returned
//   through memory as the headers' callers expect.
//
// ModuleObj's vtable and type_info are defined by the Rust side
// (src/cxx_shim/module_vtable.rs) under TVM-FFI's names, so code built
// against the headers can subclass ModuleObj: a cdylib only exports what
// Rust defines. Consequently the key function (ImportModule) is never
// defined as a member here, which keeps the compiler from emitting a
// second vtable; the member functions TVM-FFI's library provides are
// extern "C" tether_shim_ModuleObj_* functions behind exported trampolines.
#ifndef TETHER_CXX_MODULE_OBJECT_H_
#define TETHER_CXX_MODULE_OBJECT_H_

#include "library_surface.h"

extern "C" {
struct TetherCxxObjectHeader {
  uint64_t combined_ref_count;
  int32_t type_index;
  uint32_t padding;
  void (*deleter)(void* self, int flags);
};
}

namespace tvm {
namespace ffi {

enum : int32_t {
  kTetherOpaquePtr = 4,
  kTetherFunction = 68,
  kTetherArray = 71,
  kTetherModule = 73,
};

class Object {
 public:
  TetherCxxObjectHeader header_;
};

class Function : public ObjectRef {
 public:
  using ObjectRef::ObjectRef;
};

template <>
class Optional<Function, void> : public ObjectRef {
 public:
  using ObjectRef::ObjectRef;
};

// Optional<String> is one Any holding None or the string.
template <>
class Optional<String, void> : public Any {};

template <typename T, typename = void>
class Array;
template <>
class Array<String, void> : public ObjectRef {
 public:
  using ObjectRef::ObjectRef;
};

class Bytes : public Any {};

template <typename F>
class TypedFunction;
template <>
class TypedFunction<void(String, void*)> : public ObjectRef {};

class Module : public ObjectRef {
 public:
  using ObjectRef::ObjectRef;
  static Module LoadFromFile(const String& file_name);
  static void VisitContextSymbols(const TypedFunction<void(String, void*)>& callback);
};

class ModuleObj : public Object {
 public:
  virtual const char* kind() const = 0;
  virtual int GetPropertyMask() const;
  virtual Optional<Function> GetFunction(const String& name) = 0;
  virtual bool ImplementsFunction(const String& name);
  virtual Optional<String> GetFunctionDoc(const String& name);
  virtual Optional<String> GetFunctionMetadata(const String& name);
  virtual void WriteToFile(const String& file_name, const String& format) const;
  virtual Array<String> GetWriteFormats() const;
  virtual Bytes SaveToBytes() const;
  virtual String InspectSource(const String& format) const;
  virtual void ImportModule(const Module& other);
  virtual void ClearImports();

  Optional<Function> GetFunction(const String& name, bool query_imports);
  bool ImplementsFunction(const String& name, bool query_imports);
  Optional<String> GetFunctionDoc(const String& name, bool query_imports);
  Optional<String> GetFunctionMetadata(const String& name, bool query_imports);

  // The FFI handle of a module object, and back.
  void* handle() { return static_cast<Object*>(this); }
  static ModuleObj* FromHandle(void* handle) {
    return static_cast<ModuleObj*>(static_cast<Object*>(handle));
  }

 protected:
  // Takes over the two owned (empty) containers.
  ModuleObj(void* imports, void* lookup_cache) : imports_(imports), import_lookup_cache_(lookup_cache) {}

 public:
  ObjectRef imports_;
  ObjectRef import_lookup_cache_;
};

}  // namespace ffi
}  // namespace tvm

#endif  // TETHER_CXX_MODULE_OBJECT_H_
