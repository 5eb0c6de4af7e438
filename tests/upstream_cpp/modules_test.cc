// C++ compiled against apache-tvm-ffi's published headers, linked against
// tether's libtether_core only, using modules the way TVM-FFI users do:
// Module::LoadFromFile on a library built with TVM_FFI_DLL_EXPORT_TYPED_FUNC
// (path in argv[1]), calling its functions, docstrings and metadata,
// imports and TVMFFIEnvModLookupFromImports, the system library, context
// symbols (Module::VisitContextSymbols), a ModuleObj subclass defined here
// and used through the headers' API and the ffi.Module* globals, and
// failures caught as tvm::ffi::Error. Prints "N passed, N failed".
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/string.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "check.h"

namespace ffi = tvm::ffi;

// Runs `body`, which must throw tvm::ffi::Error of `kind` whose message
// contains `needle`.
template <typename F>
static void expect_error(F body, const char* kind, const char* needle) {
  try {
    body();
    CHECK(false && "expected an error");
  } catch (const ffi::Error& e) {
    CHECK(e.kind() == kind);
    CHECK(contains(e.message(), needle));
    if (e.kind() != kind || !contains(e.message(), needle)) {
      std::fprintf(stderr, "  got %s: %s\n", e.kind().c_str(), e.message().c_str());
    }
  }
}

static int context_value = 42;

// A module written against the headers: the vtable the headers' code calls
// through is its own, derived from the core's ModuleObj.
class CountingModuleObj : public ffi::ModuleObj {
 public:
  const char* kind() const final { return "counting"; }
  int GetPropertyMask() const final { return ffi::Module::kRunnable; }
  ffi::Optional<ffi::Function> GetFunction(const ffi::String& name) final {
    ++lookups;
    if (name == "times_two") {
      return ffi::Function::FromTyped([](int64_t x) { return x * 2; });
    }
    if (name == "throws") {
      throw ffi::Error("IndexError", "thrown by a subclass", "");
    }
    return std::nullopt;
  }
  ffi::Optional<ffi::String> GetFunctionDoc(const ffi::String& name) final {
    if (name == "times_two") return ffi::String("Doubles x.");
    return std::nullopt;
  }
  ffi::Array<ffi::String> GetWriteFormats() const final { return {"cnt"}; }
  ffi::String InspectSource(const ffi::String& format) const final {
    return ffi::String("source as " + std::string(format));
  }
  int lookups = 0;
};

static void test_load_and_call(const std::string& path) {
  ffi::Module mod = ffi::Module::LoadFromFile(path);
  CHECK(std::string(mod->kind()) == "library");
  CHECK(mod->GetPropertyMask() == (ffi::Module::kBinarySerializable | ffi::Module::kRunnable));
  ffi::Optional<ffi::Function> add_one = mod->GetFunction("add_one");
  CHECK(add_one.has_value());
  if (add_one.has_value()) CHECK((*add_one)(41).cast<int64_t>() == 42);
  ffi::Function greet = mod->GetFunction("greet", false).value();
  CHECK(greet(ffi::String("tether")).cast<ffi::String>() == "hello tether");
  CHECK(!mod->GetFunction("no_such_function").has_value());
  CHECK(!mod->GetFunction("no_such_function", true).has_value());
  CHECK(mod->ImplementsFunction("add_one"));
  CHECK(mod->ImplementsFunction("add_one", false));
  CHECK(!mod->ImplementsFunction("no_such_function", true));
  CHECK(mod->GetFunctionDoc("add_one").value_or("") == "Add one to x.");
  CHECK(mod->GetFunctionDoc("add_one", true).value_or("") == "Add one to x.");
  CHECK(!mod->GetFunctionDoc("greet", true).has_value());
  ffi::Optional<ffi::String> metadata = mod->GetFunctionMetadata("add_one", false);
  CHECK(metadata.has_value());
  if (metadata.has_value()) CHECK(contains(std::string(*metadata), "type_schema"));
  CHECK(mod->GetWriteFormats().size() == 0);
  CHECK(mod->InspectSource("").empty());
  expect_error([&] { mod->WriteToFile("x.so", "so"); }, "RuntimeError",
               "Module[library] does not support WriteToFile");
  expect_error([&] { mod->SaveToBytes(); }, "RuntimeError", "Module[library] does not support SaveToBytes");
  // An error raised inside the library reaches the caller as itself.
  expect_error([&] { mod->GetFunction("fail").value()(7); }, "ValueError", "fail got 7");
  // The library context is the module's C++ object.
  void* ctx = mod->GetFunction("library_ctx").value()().cast<void*>();
  CHECK(ctx == static_cast<void*>(const_cast<ffi::ModuleObj*>(mod.operator->())));
  // Context symbols registered before the load are stored into the library.
  CHECK(mod->GetFunction("context_symbol").value()().cast<void*>() == &context_value);
  // Functions keep their module (and the library) alive.
  ffi::Function kept = mod->GetFunction("add_one").value();
  mod = ffi::Module(ffi::make_object<CountingModuleObj>());
  CHECK(kept(1).cast<int64_t>() == 2);
}

static void test_imports(const std::string& path) {
  ffi::Module lib = ffi::Module::LoadFromFile(path);
  ffi::ObjectPtr<CountingModuleObj> counting_obj = ffi::make_object<CountingModuleObj>();
  CountingModuleObj* counting_raw = counting_obj.get();
  ffi::Module counting(counting_obj);
  CHECK(!lib->GetFunction("times_two", true).has_value());
  lib->ImportModule(counting);
  CHECK(lib->imports().size() == 1);
  CHECK(!lib->GetFunction("times_two", false).has_value());
  ffi::Optional<ffi::Function> doubled = lib->GetFunction("times_two", true);
  CHECK(doubled.has_value());
  if (doubled.has_value()) CHECK((*doubled)(21).cast<int64_t>() == 42);
  CHECK(lib->ImplementsFunction("times_two", true));
  CHECK(!lib->ImplementsFunction("times_two", false));
  CHECK(lib->GetFunctionDoc("times_two", true).value_or("") == "Doubles x.");
  // The library reaches its import through TVMFFIEnvModLookupFromImports,
  // once: later calls hit the module's lookup cache.
  ffi::Function call_from_imports = lib->GetFunction("call_from_imports").value();
  int before = counting_raw->lookups;
  CHECK(call_from_imports(ffi::String("times_two"), 5).cast<int64_t>() == 10);
  CHECK(call_from_imports(ffi::String("times_two"), 6).cast<int64_t>() == 12);
  CHECK(counting_raw->lookups == before + 1);
  // The global registry is the last resort.
  ffi::Function::SetGlobal("tether.test.negate", ffi::Function::FromTyped([](int64_t x) { return -x; }), true);
  CHECK(call_from_imports(ffi::String("tether.test.negate"), 3).cast<int64_t>() == -3);
  expect_error([&] { call_from_imports(ffi::String("tether.test.missing"), 1); }, "RuntimeError",
               "Cannot find function tether.test.missing in the imported modules or global registry.");
  // A subclass's exception crosses the core's import walk unchanged.
  expect_error([&] { lib->GetFunction("throws", true); }, "IndexError", "thrown by a subclass");
  // Cycles are refused.
  expect_error([&] { counting->ImportModule(lib); }, "RuntimeError", "Cyclic dependency detected during import");
  expect_error([&] { lib->ImportModule(lib); }, "RuntimeError", "Cyclic dependency detected during import");
  lib->ClearImports();
  CHECK(lib->imports().size() == 0);
  CHECK(!lib->GetFunction("times_two", true).has_value());
}

static void test_subclass_through_globals() {
  ffi::Module counting(ffi::make_object<CountingModuleObj>());
  auto global = [](const char* name) { return ffi::Function::GetGlobal(name).value(); };
  CHECK(global("ffi.ModuleGetKind")(counting).cast<ffi::String>() == "counting");
  CHECK(global("ffi.ModuleGetPropertyMask")(counting).cast<int>() == ffi::Module::kRunnable);
  ffi::Array<ffi::String> formats = global("ffi.ModuleGetWriteFormats")(counting).cast<ffi::Array<ffi::String>>();
  CHECK(formats.size() == 1 && formats[0] == "cnt");
  CHECK(global("ffi.ModuleInspectSource")(counting, ffi::String("c")).cast<ffi::String>() == "source as c");
  ffi::Function f = global("ffi.ModuleGetFunction")(counting, ffi::String("times_two"), true).cast<ffi::Function>();
  CHECK(f(4).cast<int64_t>() == 8);
  CHECK(global("ffi.ModuleGetFunction")(counting, ffi::String("nope"), true) == nullptr);
  CHECK(global("ffi.ModuleImplementsFunction")(counting, ffi::String("times_two"), false).cast<bool>());
  CHECK(global("ffi.ModuleGetFunctionDoc")(counting, ffi::String("times_two"), false).cast<ffi::String>() ==
        "Doubles x.");
  // Defaults of the base class, from the core's vtable.
  CHECK(global("ffi.ModuleGetFunctionMetadata")(counting, ffi::String("times_two"), false) == nullptr);
  expect_error([&] { global("ffi.ModuleWriteToFile")(counting, ffi::String("a"), ffi::String("b")); },
               "RuntimeError", "Module[counting] does not support WriteToFile");
  expect_error([&] { global("ffi.ModuleGetFunction")(counting, ffi::String("throws"), false); }, "IndexError",
               "thrown by a subclass");
  expect_error([&] { global("ffi.ModuleGetKind")(1); }, "TypeError",
               "Mismatched type on argument #0 when calling: `ffi.ModuleGetKind(0: ffi.Module) -> str`");
}

static int64_t triple(int64_t x) { return 3 * x; }
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sys_triple, triple);

static void test_system_lib() {
  CHECK(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_sys_triple", reinterpret_cast<void*>(&__tvm_ffi_sys_triple)) ==
        0);
  CHECK(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_pre.prefixed",
                                            reinterpret_cast<void*>(&__tvm_ffi_sys_triple)) == 0);
  ffi::Function system_lib = ffi::Function::GetGlobal("ffi.SystemLib").value();
  ffi::Module sys = system_lib().cast<ffi::Module>();
  CHECK(std::string(sys->kind()) == "library");
  CHECK(sys.same_as(system_lib().cast<ffi::Module>()));
  CHECK(sys->GetFunction("sys_triple").value()(5).cast<int64_t>() == 15);
  CHECK(sys->GetFunctionMetadata("sys_triple").has_value() == false);
  ffi::Module prefixed = system_lib(ffi::String("pre.")).cast<ffi::Module>();
  CHECK(!prefixed.same_as(sys));
  CHECK(prefixed->GetFunction("prefixed").value()(2).cast<int64_t>() == 6);
  // Unprefixed names are found too.
  CHECK(prefixed->GetFunction("sys_triple").has_value());
}

static void test_context_symbols() {
  std::vector<std::pair<std::string, void*>> seen;
  ffi::Module::VisitContextSymbols(
      ffi::TypedFunction<void(ffi::String, void*)>([&](ffi::String name, void* ptr) {
        seen.emplace_back(std::string(name), ptr);
      }));
  bool found = false;
  for (auto& [name, ptr] : seen) found = found || (name == "tether_test_context_symbol" && ptr == &context_value);
  CHECK(found);
  expect_error(
      [] {
        ffi::Module::VisitContextSymbols(ffi::TypedFunction<void(ffi::String, void*)>(
            [](ffi::String, void*) { throw ffi::Error("KeyError", "stop visiting", ""); }));
      },
      "KeyError", "stop visiting");
}

static void test_load_errors(const std::string& path) {
  expect_error([] { ffi::Module::LoadFromFile("no_extension"); }, "RuntimeError",
               "Failed to get file format from no_extension");
  expect_error([] { ffi::Module::LoadFromFile("a.unknownfmt"); }, "RuntimeError",
               "Loader for `.unknownfmt` files is not registered");
  expect_error([&] { ffi::Module::LoadFromFile(path + ".missing.so"); }, "RuntimeError",
               "Failed to load dynamic shared library");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s path/to/libmodule_lib.so\n", argv[0]);
    return 2;
  }
  std::string path = argv[1];
  CHECK(TVMFFIEnvModRegisterContextSymbol("tether_test_context_symbol", &context_value) == 0);
  test_load_and_call(path);
  test_imports(path);
  test_subclass_through_globals();
  test_system_lib();
  test_context_symbols();
  test_load_errors(path);
  return report("modules: ");
}
