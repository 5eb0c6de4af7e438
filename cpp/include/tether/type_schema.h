/*
 * tether/type_schema.h — the declared type of a C++ value as TVM-FFI's
 * type-schema JSON, which reflection records in field, method and global
 * function metadata: {"type_schema": "<schema>"}, the schema itself a JSON
 * text such as {"type":"ffi.Array","args":[{"type":"int"}]}, and for a
 * function {"type":"ffi.Function","named_args":{"return":[R],"params":[...]}}.
 * Frontends read it to check values (tether.type_schema) and to write
 * stubs (tether.stubgen).
 */
#ifndef TETHER_TYPE_SCHEMA_H_
#define TETHER_TYPE_SCHEMA_H_

#include <tether/containers.h>
#include <tether/function.h>
#include <tether/tensor.h>

#include <string>
#include <tuple>
#include <type_traits>

namespace tether {
namespace detail {

template <typename T>
struct SchemaOf;

inline std::string SchemaNamed(const std::string& type) { return "{\"type\":\"" + type + "\"}"; }

template <typename... Ts>
std::string SchemaList() {
  std::string s;
  ((s += (s.empty() ? "" : ",") + SchemaOf<Ts>::Json()), ...);
  return s;
}

template <typename... Ts>
std::string SchemaWithArgs(const std::string& type) {
  return "{\"type\":\"" + type + "\",\"args\":[" + SchemaList<Ts...>() + "]}";
}

template <typename R, typename... Args>
std::string FunctionSchema() {
  return "{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[" + SchemaOf<R>::Json() + "],\"params\":[" +
         SchemaList<Args...>() + "]}}";
}

template <typename R, typename ArgsTuple>
struct FunctionSchemaOfTuple;
template <typename R, typename... Args>
struct FunctionSchemaOfTuple<R, std::tuple<Args...>> {
  static std::string Json() { return FunctionSchema<R, Args...>(); }
};

/* The schema of a callable's signature (lambdas, functors, function pointers). */
template <typename F>
std::string CallableSchema() {
  using Info = FunctionInfo<std::decay_t<F>>;
  return FunctionSchemaOfTuple<std::decay_t<typename Info::Return>, typename Info::ArgsTuple>::Json();
}

template <typename T>
struct SchemaOf {
  static std::string Json() {
    if constexpr (std::is_void_v<T> || std::is_same_v<T, std::nullptr_t>) {
      return SchemaNamed("None");
    } else if constexpr (std::is_same_v<T, bool>) {
      return SchemaNamed("bool");
    } else if constexpr (std::is_integral_v<T>) {
      return SchemaNamed("int");
    } else if constexpr (std::is_floating_point_v<T>) {
      return SchemaNamed("float");
    } else if constexpr (std::is_same_v<T, String> || std::is_same_v<T, std::string>) {
      return SchemaNamed("ffi.String");
    } else if constexpr (std::is_same_v<T, Bytes>) {
      return SchemaNamed("ffi.Bytes");
    } else if constexpr (std::is_same_v<T, Any> || std::is_same_v<T, AnyView>) {
      return SchemaNamed("Any");
    } else if constexpr (std::is_same_v<T, void*>) {
      return SchemaNamed("void*");
    } else if constexpr (std::is_same_v<T, DataType>) {
      return SchemaNamed("DataType");
    } else if constexpr (std::is_same_v<T, Device>) {
      return SchemaNamed("Device");
    } else if constexpr (std::is_same_v<T, TensorView>) {
      return SchemaNamed("DLTensor*");
    } else if constexpr (std::is_same_v<T, Function>) {
      return SchemaNamed("ffi.Function");
    } else if constexpr (std::is_base_of_v<ObjectRef, T>) {
      return SchemaNamed(T::ContainerType::_type_key);
    } else {
      return SchemaNamed("Any");
    }
  }
};

template <typename T>
struct SchemaOf<const T> : SchemaOf<T> {};
template <typename T>
struct SchemaOf<T&> : SchemaOf<T> {};
template <typename T>
struct SchemaOf<T&&> : SchemaOf<T> {};
template <typename E>
struct SchemaOf<Array<E>> {
  static std::string Json() { return SchemaWithArgs<E>("ffi.Array"); }
};
template <typename E>
struct SchemaOf<List<E>> {
  static std::string Json() { return SchemaWithArgs<E>("ffi.List"); }
};
template <typename K, typename V>
struct SchemaOf<Map<K, V>> {
  static std::string Json() { return SchemaWithArgs<K, V>("ffi.Map"); }
};
template <typename K, typename V>
struct SchemaOf<Dict<K, V>> {
  static std::string Json() { return SchemaWithArgs<K, V>("ffi.Dict"); }
};
template <typename T>
struct SchemaOf<Optional<T>> {
  static std::string Json() { return SchemaWithArgs<T>("Optional"); }
};
template <typename... Ts>
struct SchemaOf<Variant<Ts...>> {
  static std::string Json() { return SchemaWithArgs<Ts...>("Variant"); }
};
template <typename... Ts>
struct SchemaOf<Tuple<Ts...>> {
  static std::string Json() { return SchemaWithArgs<Ts...>("Tuple"); }
};
template <typename T>
struct SchemaOf<ObjectPtr<T>> {
  static std::string Json() { return SchemaNamed(T::_type_key); }
};
template <typename R, typename... Args>
struct SchemaOf<TypedFunction<R(Args...)>> {
  static std::string Json() { return FunctionSchema<R, Args...>(); }
};

/* A JSON string literal holding `text`. */
inline std::string JsonQuote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[(c >> 4) & 0xf];
      out += hex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/* The metadata text recording `schema`: {"type_schema": "<schema>"}. */
inline std::string SchemaMetadata(const std::string& schema) { return "{\"type_schema\":" + JsonQuote(schema) + "}"; }

}  // namespace detail
}  // namespace tether

#endif  // TETHER_TYPE_SCHEMA_H_
