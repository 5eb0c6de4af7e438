// TVM-FFI's module object on tether's core: the C++ side of ffi.Module.
//
// Code compiled against TVM-FFI's headers calls a module's functions
// through its vtable (mod->GetFunction(name) is a virtual call made
// inline), and may subclass ModuleObj. So module objects are C++ objects
// whatever made them, and this file holds everything that has to be C++:
//
// * The default implementations of ModuleObj's virtual functions
//   (tether_shim_ModuleObj_default_*), the entries of the ModuleObj vtable
//   the Rust side defines (src/cxx_shim/module_vtable.rs); a member
//   function and an extern "C" function taking the object first are called
//   the same way on the Itanium ABI.
// * The member functions TVM-FFI's library implements (the
//   query_imports overloads, ImportModule, ClearImports,
//   Module::LoadFromFile, Module::VisitContextSymbols), reached through
//   trampolines under TVM-FFI's mangled names (src/cxx_shim/exports.rs).
// * The library module (kind "library", what Module::LoadFromFile and
//   ffi.SystemLib return), whose symbol lookups are done in Rust.
// * tether_shim_module_call, through which the Rust side calls any
//   module's virtual functions, turning C++ exceptions into raised errors.
//
// The logic itself (import walks, cycle checks, dlopen, symbol lookup) is
// in Rust (src/module/), reached through tether_cxx_module_* bridge
// functions in the packed safe-call shape; a failure is rethrown here as
// tvm::ffi::Error.
#include "module_object.h"

#include <exception>
#include <initializer_list>
#include <new>
#include <string>
#include <type_traits>

extern "C" {
int TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message);
void TVMFFIErrorSetRaised(void* error);

int tether_cxx_module_get_function(const TetherCxxAny* args, int32_t n, TetherCxxAny* result);
int tether_cxx_module_implements_function(const TetherCxxAny* args, int32_t n, TetherCxxAny* result);
int tether_cxx_module_get_function_doc(const TetherCxxAny* args, int32_t n, TetherCxxAny* result);
int tether_cxx_module_get_function_metadata(const TetherCxxAny* args, int32_t n, TetherCxxAny* result);
int tether_cxx_module_import_module(const TetherCxxAny* args, int32_t n, TetherCxxAny* result);
int tether_cxx_module_clear_imports(const TetherCxxAny* args, int32_t n, TetherCxxAny* result);
int tether_cxx_module_load_from_file(const TetherCxxAny* args, int32_t n, TetherCxxAny* result);
int tether_cxx_module_visit_context_symbols(const TetherCxxAny* args, int32_t n, TetherCxxAny* result);
int tether_cxx_module_empty_array(const TetherCxxAny* args, int32_t n, TetherCxxAny* result);
int tether_cxx_library_get_function(const TetherCxxAny* args, int32_t n, TetherCxxAny* result);
int tether_cxx_library_get_function_doc(const TetherCxxAny* args, int32_t n, TetherCxxAny* result);
int tether_cxx_library_get_function_metadata(const TetherCxxAny* args, int32_t n, TetherCxxAny* result);
void tether_cxx_library_state_drop(void* state);
}

namespace {

using tvm::ffi::Any;
using tvm::ffi::Array;
using tvm::ffi::Bytes;
using tvm::ffi::Function;
using tvm::ffi::Module;
using tvm::ffi::ModuleObj;
using tvm::ffi::ObjectRef;
using tvm::ffi::Optional;
using tvm::ffi::String;
using tether_cxx::ThrowRaised;

using BridgeFn = int (*)(const TetherCxxAny*, int32_t, TetherCxxAny*);

constexpr TetherCxxAny kNone{tvm::ffi::kTetherNone, 0, {0}};

Any Call(BridgeFn fn, std::initializer_list<TetherCxxAny> args) {
  TetherCxxAny result = kNone;
  if (fn(args.begin(), static_cast<int32_t>(args.size()), &result) != 0) ThrowRaised();
  return Any::FromOwned(result);
}

TetherCxxAny Bool(bool v) {
  TetherCxxAny a = kNone;
  a.type_index = tvm::ffi::kTetherBool;
  a.v_int64 = v ? 1 : 0;
  return a;
}

TetherCxxAny Int(int64_t v) {
  TetherCxxAny a = kNone;
  a.type_index = tvm::ffi::kTetherInt;
  a.v_int64 = v;
  return a;
}

TetherCxxAny Opaque(void* p) {
  TetherCxxAny a = kNone;
  a.type_index = tvm::ffi::kTetherOpaquePtr;
  a.v_ptr = p;
  return a;
}

// A borrowed view of an object (a module, a function).
TetherCxxAny Obj(void* handle, int32_t type_index) {
  TetherCxxAny a = kNone;
  a.type_index = type_index;
  a.v_obj = handle;
  return a;
}

TetherCxxAny ModuleView(ModuleObj* self) { return Obj(self->handle(), tvm::ffi::kTetherModule); }

// Moves an owned result into an object reference (None becomes null).
template <typename Ref>
Ref TakeObject(Any& value) {
  if (value.data_.type_index < tvm::ffi::kTetherStaticObjectBegin) return Ref();
  void* obj = value.data_.v_obj;
  value.data_ = kNone;
  return Ref(obj);
}

// Moves an owned result into an Any-shaped class (String, Optional<String>).
template <typename T>
T TakeAny(Any& value) {
  T out;
  out.data_ = value.data_;
  value.data_ = kNone;
  return out;
}

// A copy of an Any-shaped argument (a reference of its own).
template <typename T>
T CopyAny(const TetherCxxAny& value) {
  if (value.type_index >= tvm::ffi::kTetherStaticObjectBegin) TVMFFIObjectIncRef(value.v_obj);
  T out;
  out.data_ = value;
  return out;
}

[[noreturn]] void ThrowError(const char* kind, const std::string& message) {
  TetherCxxByteArray k{kind, std::char_traits<char>::length(kind)};
  TetherCxxByteArray m{message.data(), message.size()};
  TetherCxxByteArray backtrace{"", 0};
  void* err = nullptr;
  if (TVMFFIErrorCreate(&k, &m, &backtrace, &err) != 0 || err == nullptr) ThrowRaised();
  throw tvm::ffi::Error(err);
}

String StringFrom(const char* s) {
  TetherCxxByteArray bytes{s, s == nullptr ? 0 : std::char_traits<char>::length(s)};
  TetherCxxAny out = kNone;
  if (TVMFFIStringFromByteArray(&bytes, &out) != 0) ThrowRaised();
  String str;
  str.data_ = out;
  return str;
}

// The module behind Module::LoadFromFile and ffi.SystemLib: a library of
// symbols (a dlopen handle or the system library's table), owned by the
// Rust side through state_.
class LibraryModuleObj final : public ModuleObj {
 public:
  LibraryModuleObj(void* state, void* imports, void* lookup_cache)
      : ModuleObj(imports, lookup_cache), state_(state) {}
  ~LibraryModuleObj() { tether_cxx_library_state_drop(state_); }

  const char* kind() const final { return "library"; }
  // kBinarySerializable | kRunnable, as TVM-FFI's library module reports.
  int GetPropertyMask() const final { return 0b011; }
  Optional<Function> GetFunction(const String& name) final {
    Any r = Call(tether_cxx_library_get_function, {Opaque(state_), ModuleView(this), name.data_});
    return TakeObject<Optional<Function>>(r);
  }
  bool ImplementsFunction(const String& name) final { return GetFunction(name).data_ != nullptr; }
  Optional<String> GetFunctionDoc(const String& name) final {
    Any r = Call(tether_cxx_library_get_function_doc, {Opaque(state_), name.data_});
    return TakeAny<Optional<String>>(r);
  }
  Optional<String> GetFunctionMetadata(const String& name) final {
    Any r = Call(tether_cxx_library_get_function_metadata, {Opaque(state_), name.data_});
    return TakeAny<Optional<String>>(r);
  }
  void WriteToFile(const String& file_name, const String& format) const final;
  Array<String> GetWriteFormats() const final;
  Bytes SaveToBytes() const final;
  String InspectSource(const String& format) const final;

  static void Deleter(void* handle, int flags) {
    ModuleObj* base = ModuleObj::FromHandle(handle);
    if (flags & 1) static_cast<LibraryModuleObj*>(base)->~LibraryModuleObj();  // strong references gone
    // Weak references gone: the object may already be destroyed (its dynamic
    // type is no longer LibraryModuleObj), so the storage is released through
    // the base pointer, which is the start of the allocation (ModuleObj is
    // the only base), without a downcast.
    if (flags & 2) ::operator delete(static_cast<void*>(base));
  }

 private:
  void* state_;
};

}  // namespace

extern "C" {

// ---- ModuleObj's virtual functions' defaults (the vtable's entries) ----

int tether_shim_ModuleObj_default_GetPropertyMask(const ModuleObj*) { return 0; }

bool tether_shim_ModuleObj_default_ImplementsFunction(ModuleObj* self, const String& name) {
  return self->GetFunction(name).data_ != nullptr;
}

Optional<String> tether_shim_ModuleObj_default_GetFunctionDoc(ModuleObj*, const String&) {
  return Optional<String>();
}

Optional<String> tether_shim_ModuleObj_default_GetFunctionMetadata(ModuleObj*, const String&) {
  return Optional<String>();
}

void tether_shim_ModuleObj_default_WriteToFile(const ModuleObj* self, const String&, const String&) {
  ThrowError("RuntimeError", std::string("Module[") + self->kind() + "] does not support WriteToFile");
}

Array<String> tether_shim_ModuleObj_default_GetWriteFormats(const ModuleObj*) {
  Any r = Call(tether_cxx_module_empty_array, {});
  return TakeObject<Array<String>>(r);
}

Bytes tether_shim_ModuleObj_default_SaveToBytes(const ModuleObj* self) {
  ThrowError("RuntimeError", std::string("Module[") + self->kind() + "] does not support SaveToBytes");
}

String tether_shim_ModuleObj_default_InspectSource(const ModuleObj*, const String&) {
  String empty;
  empty.data_ = kNone;
  empty.data_.type_index = tvm::ffi::kTetherSmallStr;
  return empty;
}

// ---- The member functions TVM-FFI's library implements ----

void tether_shim_ModuleObj_ImportModule(ModuleObj* self, const Module& other) {
  Call(tether_cxx_module_import_module, {ModuleView(self), Obj(other.data_, tvm::ffi::kTetherModule)});
}

void tether_shim_ModuleObj_ClearImports(ModuleObj* self) {
  Call(tether_cxx_module_clear_imports, {ModuleView(self)});
}

Optional<Function> tether_shim_ModuleObj_GetFunction(ModuleObj* self, const String& name, bool query_imports) {
  Any r = Call(tether_cxx_module_get_function, {ModuleView(self), name.data_, Bool(query_imports)});
  return TakeObject<Optional<Function>>(r);
}

bool tether_shim_ModuleObj_ImplementsFunction(ModuleObj* self, const String& name, bool query_imports) {
  Any r = Call(tether_cxx_module_implements_function, {ModuleView(self), name.data_, Bool(query_imports)});
  return r.data_.v_int64 != 0;
}

Optional<String> tether_shim_ModuleObj_GetFunctionDoc(ModuleObj* self, const String& name, bool query_imports) {
  Any r = Call(tether_cxx_module_get_function_doc, {ModuleView(self), name.data_, Bool(query_imports)});
  return TakeAny<Optional<String>>(r);
}

Optional<String> tether_shim_ModuleObj_GetFunctionMetadata(ModuleObj* self, const String& name,
                                                          bool query_imports) {
  Any r = Call(tether_cxx_module_get_function_metadata, {ModuleView(self), name.data_, Bool(query_imports)});
  return TakeAny<Optional<String>>(r);
}

Module tether_shim_Module_LoadFromFile(const String& file_name) {
  Any r = Call(tether_cxx_module_load_from_file, {file_name.data_});
  return TakeObject<Module>(r);
}

void tether_shim_Module_VisitContextSymbols(const tvm::ffi::TypedFunction<void(String, void*)>& callback) {
  Call(tether_cxx_module_visit_context_symbols, {Obj(callback.data_, tvm::ffi::kTetherFunction)});
}

// ---- Called by the Rust side ----

// A new library module over `state` (owned by the module from here on, even
// when this fails), taking over the two empty containers. Returns the
// owned handle, or NULL when out of memory.
void* tether_shim_library_module_new(void* state, void* imports, void* lookup_cache) {
  void* memory = ::operator new(sizeof(LibraryModuleObj), std::nothrow);
  if (memory == nullptr) {
    tether_cxx_library_state_drop(state);
    TVMFFIObjectDecRef(imports);
    TVMFFIObjectDecRef(lookup_cache);
    return nullptr;
  }
  LibraryModuleObj* obj = new (memory) LibraryModuleObj(state, imports, lookup_cache);
  obj->header_.combined_ref_count = (uint64_t{1} << 32) | 1;  // one strong, one weak
  obj->header_.type_index = tvm::ffi::kTetherModule;
  obj->header_.padding = 0;
  obj->header_.deleter = &LibraryModuleObj::Deleter;
  return obj->handle();
}

// Operations of tether_shim_module_call: ModuleObj's virtual functions.
enum ModuleOp : int32_t {
  kOpKind = 0,
  kOpGetPropertyMask = 1,
  kOpGetFunction = 2,           // (name)
  kOpImplementsFunction = 3,    // (name)
  kOpGetFunctionDoc = 4,        // (name)
  kOpGetFunctionMetadata = 5,   // (name)
  kOpWriteToFile = 6,           // (file_name, format)
  kOpGetWriteFormats = 7,
  kOpSaveToBytes = 8,
  kOpInspectSource = 9,         // (format)
  kOpImportModule = 10,         // (module)
  kOpClearImports = 11,
};

// Calls virtual function `op` of the module `handle` with the borrowed
// `args` (strings are str values, the module a module object; the Rust
// caller checks them), storing the owned result. Returns 0, or -1 with the
// error raised: a C++ exception never leaves this function.
int tether_shim_module_call(int32_t op, void* handle, const TetherCxxAny* args, int32_t num_args,
                            TetherCxxAny* result) {
  static const int32_t kArity[] = {0, 0, 1, 1, 1, 1, 2, 0, 0, 1, 1, 0};
  if (handle == nullptr || result == nullptr || op < 0 || op > kOpClearImports || num_args != kArity[op]) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "tether_shim_module_call: invalid arguments");
    return -1;
  }
  ModuleObj* self = ModuleObj::FromHandle(handle);
  try {
    Any out;
    switch (op) {
      case kOpKind:
        out = StringFrom(self->kind());
        break;
      case kOpGetPropertyMask:
        out.data_ = Int(self->GetPropertyMask());
        break;
      case kOpGetFunction: {
        Optional<Function> f = self->GetFunction(CopyAny<String>(args[0]));
        if (f.data_ != nullptr) {
          out.data_ = Obj(f.data_, tvm::ffi::kTetherFunction);
          f.data_ = nullptr;  // the reference moves to `out`
        }
        break;
      }
      case kOpImplementsFunction:
        out.data_ = Bool(self->ImplementsFunction(CopyAny<String>(args[0])));
        break;
      case kOpGetFunctionDoc:
        out = self->GetFunctionDoc(CopyAny<String>(args[0]));
        break;
      case kOpGetFunctionMetadata:
        out = self->GetFunctionMetadata(CopyAny<String>(args[0]));
        break;
      case kOpWriteToFile:
        self->WriteToFile(CopyAny<String>(args[0]), CopyAny<String>(args[1]));
        break;
      case kOpGetWriteFormats: {
        Array<String> formats = self->GetWriteFormats();
        if (formats.data_ != nullptr) {
          TVMFFIObjectIncRef(formats.data_);
          out.data_ = Obj(formats.data_, tvm::ffi::kTetherArray);
        }
        break;
      }
      case kOpSaveToBytes:
        out = self->SaveToBytes();
        break;
      case kOpInspectSource:
        out = self->InspectSource(CopyAny<String>(args[0]));
        break;
      case kOpImportModule: {
        TVMFFIObjectIncRef(args[0].v_obj);
        Module other(args[0].v_obj);
        self->ImportModule(other);
        break;
      }
      case kOpClearImports:
        self->ClearImports();
        break;
    }
    *result = out.data_;
    out.data_ = kNone;
    return 0;
  } catch (const tvm::ffi::Error& e) {
    TVMFFIErrorSetRaised(e.data_);
  } catch (const std::exception& e) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", e.what());
  } catch (...) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "unknown C++ exception in a module function");
  }
  return -1;
}

}  // extern "C"

void LibraryModuleObj::WriteToFile(const String& file_name, const String& format) const {
  tether_shim_ModuleObj_default_WriteToFile(this, file_name, format);
}
Array<String> LibraryModuleObj::GetWriteFormats() const { return tether_shim_ModuleObj_default_GetWriteFormats(this); }
Bytes LibraryModuleObj::SaveToBytes() const { return tether_shim_ModuleObj_default_SaveToBytes(this); }
String LibraryModuleObj::InspectSource(const String& format) const {
  return tether_shim_ModuleObj_default_InspectSource(this, format);
}

// Each extern "C" function has the signature of the member function (or
// static function) whose place it takes, with the object passed first.
namespace {
template <typename Member>
struct AsFree;
template <typename R, typename C, typename... A>
struct AsFree<R (C::*)(A...)> {
  using type = R (*)(C*, A...);
};
template <typename R, typename C, typename... A>
struct AsFree<R (C::*)(A...) const> {
  using type = R (*)(const C*, A...);
};
}  // namespace

#define TETHER_SAME_MEMBER(member, impl, ...)                                                     \
  static_assert(std::is_same<AsFree<decltype(static_cast<__VA_ARGS__>(&member))>::type,          \
                             decltype(&impl)>::value,                                             \
                #impl " differs from " #member)
TETHER_SAME_MEMBER(ModuleObj::GetPropertyMask, tether_shim_ModuleObj_default_GetPropertyMask,
                   int (ModuleObj::*)() const);
TETHER_SAME_MEMBER(ModuleObj::ImplementsFunction, tether_shim_ModuleObj_default_ImplementsFunction,
                   bool (ModuleObj::*)(const String&));
TETHER_SAME_MEMBER(ModuleObj::GetFunctionDoc, tether_shim_ModuleObj_default_GetFunctionDoc,
                   Optional<String> (ModuleObj::*)(const String&));
TETHER_SAME_MEMBER(ModuleObj::GetFunctionMetadata, tether_shim_ModuleObj_default_GetFunctionMetadata,
                   Optional<String> (ModuleObj::*)(const String&));
TETHER_SAME_MEMBER(ModuleObj::WriteToFile, tether_shim_ModuleObj_default_WriteToFile,
                   void (ModuleObj::*)(const String&, const String&) const);
TETHER_SAME_MEMBER(ModuleObj::GetWriteFormats, tether_shim_ModuleObj_default_GetWriteFormats,
                   Array<String> (ModuleObj::*)() const);
TETHER_SAME_MEMBER(ModuleObj::SaveToBytes, tether_shim_ModuleObj_default_SaveToBytes,
                   Bytes (ModuleObj::*)() const);
TETHER_SAME_MEMBER(ModuleObj::InspectSource, tether_shim_ModuleObj_default_InspectSource,
                   String (ModuleObj::*)(const String&) const);
TETHER_SAME_MEMBER(ModuleObj::ImportModule, tether_shim_ModuleObj_ImportModule,
                   void (ModuleObj::*)(const Module&));
TETHER_SAME_MEMBER(ModuleObj::ClearImports, tether_shim_ModuleObj_ClearImports, void (ModuleObj::*)());
TETHER_SAME_MEMBER(ModuleObj::GetFunction, tether_shim_ModuleObj_GetFunction,
                   Optional<Function> (ModuleObj::*)(const String&, bool));
TETHER_SAME_MEMBER(ModuleObj::ImplementsFunction, tether_shim_ModuleObj_ImplementsFunction,
                   bool (ModuleObj::*)(const String&, bool));
TETHER_SAME_MEMBER(ModuleObj::GetFunctionDoc, tether_shim_ModuleObj_GetFunctionDoc,
                   Optional<String> (ModuleObj::*)(const String&, bool));
TETHER_SAME_MEMBER(ModuleObj::GetFunctionMetadata, tether_shim_ModuleObj_GetFunctionMetadata,
                   Optional<String> (ModuleObj::*)(const String&, bool));
static_assert(std::is_same<decltype(&Module::LoadFromFile), decltype(&tether_shim_Module_LoadFromFile)>::value,
              "tether_shim_Module_LoadFromFile differs from Module::LoadFromFile");
static_assert(std::is_same<decltype(&Module::VisitContextSymbols),
                           decltype(&tether_shim_Module_VisitContextSymbols)>::value,
              "tether_shim_Module_VisitContextSymbols differs from Module::VisitContextSymbols");
static_assert(sizeof(ModuleObj) == 48, "ModuleObj: vtable pointer, header, imports_, import_lookup_cache_");

#ifndef TETHER_CXX_VTABLE_FROM_RUST
// Targets without the Rust-side vtable (see build.rs): the member
// functions are defined here, so the compiler emits ModuleObj's vtable and
// type_info itself. They are not exported from the cdylib there.
namespace tvm {
namespace ffi {
int ModuleObj::GetPropertyMask() const { return tether_shim_ModuleObj_default_GetPropertyMask(this); }
bool ModuleObj::ImplementsFunction(const String& name) {
  return tether_shim_ModuleObj_default_ImplementsFunction(this, name);
}
Optional<String> ModuleObj::GetFunctionDoc(const String& name) {
  return tether_shim_ModuleObj_default_GetFunctionDoc(this, name);
}
Optional<String> ModuleObj::GetFunctionMetadata(const String& name) {
  return tether_shim_ModuleObj_default_GetFunctionMetadata(this, name);
}
void ModuleObj::WriteToFile(const String& file_name, const String& format) const {
  tether_shim_ModuleObj_default_WriteToFile(this, file_name, format);
}
Array<String> ModuleObj::GetWriteFormats() const { return tether_shim_ModuleObj_default_GetWriteFormats(this); }
Bytes ModuleObj::SaveToBytes() const { return tether_shim_ModuleObj_default_SaveToBytes(this); }
String ModuleObj::InspectSource(const String& format) const {
  return tether_shim_ModuleObj_default_InspectSource(this, format);
}
void ModuleObj::ImportModule(const Module& other) { tether_shim_ModuleObj_ImportModule(this, other); }
void ModuleObj::ClearImports() { tether_shim_ModuleObj_ClearImports(this); }
}  // namespace ffi
}  // namespace tvm
#endif  // TETHER_CXX_VTABLE_FROM_RUST
