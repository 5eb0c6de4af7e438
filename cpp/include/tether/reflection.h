/*
 * tether/reflection.h — registering what a type shows to other languages:
 * fields (read-only or read-write, with docs), methods, constructors and
 * type attributes (ObjectDef<T>), and global functions (GlobalDef), usually
 * from a TETHER_STATIC_INIT_BLOCK so they exist once the library is loaded.
 *
 *   TETHER_STATIC_INIT_BLOCK() {
 *     tether::reflection::ObjectDef<PointObj>()
 *         .def_ro("x", &PointObj::x, "the x coordinate")
 *         .def_rw("label", &PointObj::label)
 *         .def("norm2", &PointObj::Norm2)
 *         .def(tether::reflection::init<PointObj, int64_t, int64_t>());
 *     tether::reflection::GlobalDef().def("demo.add", [](int64_t a, int64_t b) { return a + b; });
 *   }
 *
 * Field getters and setters are plain C functions over the field's address
 * (TVMFFIFieldGetter / TVMFFIFieldSetter), so every frontend reads fields
 * without calling back into C++ code it cannot see. Fields, methods and
 * global functions carry their declared C++ types as TVM-FFI's type-schema
 * metadata (type_schema.h), for frontends that check values or write stubs.
 */
#ifndef TETHER_REFLECTION_H_
#define TETHER_REFLECTION_H_

#include <tether/function.h>
#include <tether/type_schema.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <type_traits>

namespace tether {
namespace detail {

/* The static type index a field of type V declares (kTVMFFIAny when the
 * type is not one fixed index). */
template <typename V>
int32_t FieldStaticTypeIndex() {
  if constexpr (std::is_same_v<V, bool>) {
    return kTVMFFIBool;
  } else if constexpr (std::is_integral_v<V>) {
    return kTVMFFIInt;
  } else if constexpr (std::is_floating_point_v<V>) {
    return kTVMFFIFloat;
  } else if constexpr (std::is_same_v<V, String> || std::is_same_v<V, std::string>) {
    return kTVMFFIStr;
  } else if constexpr (std::is_same_v<V, Bytes>) {
    return kTVMFFIBytes;
  } else if constexpr (std::is_base_of_v<ObjectRef, V> && !std::is_same_v<V, ObjectRef>) {
    return V::ContainerType::RuntimeTypeIndex();
  } else {
    return kTVMFFIAny;
  }
}

template <typename V>
int FieldGetter(void* field, TVMFFIAny* result) {
  return CallCatching([&] { TypeTraits<V>::ToAny(*static_cast<const V*>(field), result); });
}

template <typename V>
int FieldSetter(void* field, const TVMFFIAny* value) {
  return CallCatching([&] { *static_cast<V*>(field) = AnyView(*value).cast<V>(); });
}

/* Offset of a data member within C (C has no virtual bases). */
template <typename C, typename V>
int64_t MemberOffset(V C::*member) {
  alignas(C) static unsigned char probe[sizeof(C)];
  const C* base = reinterpret_cast<const C*>(probe);
  return reinterpret_cast<const unsigned char*>(&(base->*member)) - probe;
}

inline TVMFFIByteArray ByteArrayOf(const char* s) { return TVMFFIByteArray{s, std::strlen(s)}; }

}  // namespace detail

namespace reflection {

/* The constructor `T(Args...)` registered by ObjectDef::def(init<T, Args...>()). */
template <typename T, typename... Args>
struct init {};

/* Registration of T's reflection. Each call registers at once and throws
 * Error when the core refuses (a field registered twice, say). */
template <typename T>
class ObjectDef {
 public:
  ObjectDef() : type_index_(T::RuntimeTypeIndex()) {
    if constexpr (std::is_default_constructible_v<T>) {
      TVMFFITypeMetadata md{};
      md.doc = TVMFFIByteArray{"", 0};
      md.creator = &CreateDefault;
      md.total_size = static_cast<int32_t>(sizeof(T));
      md.structural_eq_hash_kind = 0;
      detail::CheckCall(TVMFFITypeRegisterMetadata(type_index_, &md));
    }
  }

  /* A field readable from every frontend, not writable. */
  template <typename C, typename V>
  ObjectDef& def_ro(const char* name, V C::*member, const char* doc = "") {
    return Field(name, member, doc, false);
  }
  /* A field readable and writable (the setter converts and type-checks). */
  template <typename C, typename V>
  ObjectDef& def_rw(const char* name, V C::*member, const char* doc = "") {
    return Field(name, member, doc, true);
  }

  /* A method: a member function pointer, or a callable whose first
   * parameter is the object (ObjectPtr<T> or T's reference type). Frontends
   * call it with the object first. */
  template <typename F>
  ObjectDef& def(const char* name, F method, const char* doc = "") {
    return Method(name, MakeMethod(method, std::string(T::_type_key) + "." + name), doc, 0, MethodSchema(method));
  }
  /* A function attached to the type, called without an object. */
  template <typename F>
  ObjectDef& def_static(const char* name, F f, const char* doc = "") {
    std::string schema = detail::CallableSchema<F>();
    return Method(name, Function::FromTyped(std::move(f), std::string(T::_type_key) + "." + name), doc,
                  kTVMFFIFieldFlagBitMaskIsStaticMethod, schema);
  }
  /* The constructor T(Args...), registered as the static method
   * `__ffi_init__` and the type attribute of the same name. */
  template <typename... Args>
  ObjectDef& def(init<T, Args...>, const char* doc = "") {
    Function ctor = Function::FromTyped([](Args... args) { return make_object<T>(std::move(args)...); },
                                        std::string(T::_type_key) + ".__ffi_init__");
    attr("__ffi_init__", Any(ctor));
    return Method("__ffi_init__", ctor, doc, kTVMFFIFieldFlagBitMaskIsStaticMethod,
                  detail::FunctionSchema<ObjectPtr<T>, Args...>());
  }
  /* A type attribute (a column TVM-FFI's frontends read by name). */
  ObjectDef& attr(const char* name, const Any& value) {
    TVMFFIByteArray n = detail::ByteArrayOf(name);
    detail::CheckCall(TVMFFITypeRegisterAttr(type_index_, &n, &value.raw()));
    return *this;
  }

 private:
  static int CreateDefault(TVMFFIObjectHandle* result) {
    return detail::CallCatching([&] {
      if constexpr (std::is_default_constructible_v<T>) *result = detail::Header(make_object<T>().release());
    });
  }

  template <typename C, typename V>
  ObjectDef& Field(const char* name, V C::*member, const char* doc, bool writable) {
    static_assert(std::is_base_of_v<C, T>, "the field must be a member of T or of a base of T");
    TVMFFIFieldInfo info{};
    info.name = detail::ByteArrayOf(name);
    info.doc = detail::ByteArrayOf(doc);
    const std::string metadata = detail::SchemaMetadata(detail::SchemaOf<V>::Json());
    info.metadata = TVMFFIByteArray{metadata.data(), metadata.size()};  // the core keeps a copy
    info.flags = writable ? kTVMFFIFieldFlagBitMaskWritable : 0;
    info.size = static_cast<int64_t>(sizeof(V));
    info.alignment = static_cast<int64_t>(alignof(V));
    info.offset = detail::MemberOffset<T, V>(static_cast<V T::*>(member));
    info.getter = &detail::FieldGetter<V>;
    info.setter = writable ? reinterpret_cast<void*>(&detail::FieldSetter<V>) : nullptr;
    info.default_value_or_factory = TVMFFIAny();
    info.field_static_type_index = detail::FieldStaticTypeIndex<V>();
    detail::CheckCall(TVMFFITypeRegisterField(type_index_, &info));
    return *this;
  }

  ObjectDef& Method(const char* name, const Function& f, const char* doc, int64_t flags, const std::string& schema) {
    Any fn(f);
    const std::string metadata = detail::SchemaMetadata(schema);
    TVMFFIMethodInfo info{};
    info.name = detail::ByteArrayOf(name);
    info.doc = detail::ByteArrayOf(doc);
    info.metadata = TVMFFIByteArray{metadata.data(), metadata.size()};  // the core keeps a copy
    info.flags = flags;
    info.method = fn.raw();
    detail::CheckCall(TVMFFITypeRegisterMethod(type_index_, &info));
    return *this;
  }

  template <typename C, typename R, typename... Args>
  static Function MakeMethod(R (C::*m)(Args...) const, std::string name) {
    return Function::FromTyped([m](ObjectPtr<T> self, Args... args) -> R { return ((*self).*m)(std::move(args)...); },
                               std::move(name));
  }
  template <typename C, typename R, typename... Args>
  static Function MakeMethod(R (C::*m)(Args...), std::string name) {
    return Function::FromTyped([m](ObjectPtr<T> self, Args... args) -> R { return ((*self).*m)(std::move(args)...); },
                               std::move(name));
  }
  template <typename F>
  static Function MakeMethod(F f, std::string name) {
    return Function::FromTyped(std::move(f), std::move(name));
  }

  /* A method's signature as frontends see it: the object first. */
  template <typename C, typename R, typename... Args>
  static std::string MethodSchema(R (C::*)(Args...) const) {
    return detail::FunctionSchema<std::decay_t<R>, ObjectPtr<T>, std::decay_t<Args>...>();
  }
  template <typename C, typename R, typename... Args>
  static std::string MethodSchema(R (C::*)(Args...)) {
    return detail::FunctionSchema<std::decay_t<R>, ObjectPtr<T>, std::decay_t<Args>...>();
  }
  template <typename F>
  static std::string MethodSchema(const F&) {
    return detail::CallableSchema<F>();
  }

  int32_t type_index_;
};

/* Registration of global functions. */
class GlobalDef {
 public:
  /* A typed function under `name`; an existing name is an error unless
   * allow_override. */
  template <typename F>
  GlobalDef& def(const char* name, F f, bool allow_override = false) {
    std::string schema = detail::CallableSchema<F>();
    return Register(name, Function::FromTyped(std::move(f), name), schema, allow_override);
  }
  /* A packed function: void(const AnyView* args, int32_t num_args, Any* rv). */
  template <typename F>
  GlobalDef& def_packed(const char* name, F f, bool allow_override = false) {
    return Register(name, Function::FromPacked(std::move(f)), detail::SchemaNamed("ffi.Function"), allow_override);
  }

 private:
  /* Through TVMFFIFunctionSetGlobalFromMethodInfo, so the metadata is kept
   * with the function (ffi.GetGlobalFuncMetadata reads it back). */
  GlobalDef& Register(const char* name, const Function& f, const std::string& schema, bool allow_override) {
    Any fn(f);
    const std::string metadata = detail::SchemaMetadata(schema);
    TVMFFIMethodInfo info{};
    info.name = detail::ByteArrayOf(name);
    info.doc = TVMFFIByteArray{"", 0};
    info.metadata = TVMFFIByteArray{metadata.data(), metadata.size()};
    info.flags = 0;
    info.method = fn.raw();
    detail::CheckCall(TVMFFIFunctionSetGlobalFromMethodInfo(&info, allow_override ? 1 : 0));
    return *this;
  }
};

}  // namespace reflection

/* A block run once when the library (or program) is loaded. An exception
 * escaping it is reported on stderr and ends the process, as nothing can
 * catch it there. */
#define TETHER_STATIC_INIT_BLOCK() TETHER_STATIC_INIT_BLOCK_IMPL(TETHER_STR_CONCAT(__tether_static_init_, __COUNTER__))
#define TETHER_STATIC_INIT_BLOCK_IMPL(Name)                                   \
  static void Name();                                                         \
  [[maybe_unused]] static const int TETHER_STR_CONCAT(Name, _done) =          \
      ::tether::detail::RunStaticInit(&Name, __FILE__, __LINE__);             \
  static void Name()

namespace detail {

inline int RunStaticInit(void (*block)(), const char* file, int line) {
  try {
    block();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tether: static initialisation at %s:%d failed: %s\n", file, line, e.what());
    std::terminate();
  }
  return 0;
}

}  // namespace detail
}  // namespace tether

#endif  // TETHER_REFLECTION_H_
