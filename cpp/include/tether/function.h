/*
 * tether/function.h — Function (an ffi.Function), TypedFunction<R(Args...)>,
 * the global registry, and TETHER_DLL_EXPORT_TYPED_FUNC.
 *
 * A C++ callable becomes a Function through TVMFFIFunctionCreate: the
 * core owns the object, the callable lives in a heap holder the core
 * releases through the deleter given with it. Calls go through the packed
 * safe-call convention in both directions; exceptions stop at the
 * boundary (see error.h).
 */
#ifndef TETHER_FUNCTION_H_
#define TETHER_FUNCTION_H_

#include <tether/any.h>

#include <array>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tether {

static_assert(sizeof(Any) == sizeof(TVMFFIAny) && sizeof(AnyView) == sizeof(TVMFFIAny),
              "Any and AnyView are TVMFFIAny with methods: arrays of them cross the ABI as they are");

class FunctionObj : public Object {
 public:
  TETHER_DECLARE_STATIC_OBJECT_INFO("ffi.Function", kTVMFFIFunction, true)
  TVMFFIFunctionCell cell;
};

namespace detail {

/* The signature of a callable: lambdas and functors (through operator()),
 * function pointers and member function pointers (self first). */
template <typename F>
struct FunctionInfo : FunctionInfo<decltype(&F::operator())> {};
template <typename R, typename... Args>
struct FunctionInfo<R (*)(Args...)> {
  using Return = R;
  using ArgsTuple = std::tuple<std::decay_t<Args>...>;
  static constexpr size_t kArity = sizeof...(Args);
};
template <typename R, typename... Args>
struct FunctionInfo<R(Args...)> : FunctionInfo<R (*)(Args...)> {};
template <typename C, typename R, typename... Args>
struct FunctionInfo<R (C::*)(Args...) const> : FunctionInfo<R (*)(Args...)> {};
template <typename C, typename R, typename... Args>
struct FunctionInfo<R (C::*)(Args...)> : FunctionInfo<R (*)(Args...)> {};
template <typename C, typename R, typename... Args>
struct FunctionInfo<R (C::*)(Args...) noexcept> : FunctionInfo<R (*)(Args...)> {};
template <typename C, typename R, typename... Args>
struct FunctionInfo<R (C::*)(Args...) const noexcept> : FunctionInfo<R (*)(Args...)> {};
template <typename R, typename... Args>
struct FunctionInfo<R (*)(Args...) noexcept> : FunctionInfo<R (*)(Args...)> {};

template <typename R>
std::string ReturnTypeStr() {
  if constexpr (std::is_void_v<R>) {
    return "void";
  } else {
    return TypeTraits<std::decay_t<R>>::TypeStr();
  }
}

/* "name(0: int, 1: str) -> float", as TVM-FFI's messages print a signature. */
template <typename R, typename... Args>
std::string SignatureStr(const std::string& name) {
  std::string s = name + "(";
  size_t i = 0;
  ((s += (i ? ", " : "") + std::to_string(i) + ": " + TypeTraits<Args>::TypeStr(), ++i), ...);
  return s + ") -> " + ReturnTypeStr<R>();
}

template <typename R, typename ArgsTuple>
struct Unpacker;

template <typename R, typename... Args>
struct Unpacker<R, std::tuple<Args...>> {
  template <typename F>
  static void Run(const std::string& name, const F& f, const AnyView* args, int32_t num_args, Any* rv) {
    if (num_args != static_cast<int32_t>(sizeof...(Args))) {
      throw Error("TypeError", "Mismatched number of arguments when calling: `" + SignatureStr<R, Args...>(name) +
                                   "`. Expected " + std::to_string(sizeof...(Args)) + " but got " +
                                   std::to_string(num_args) + " arguments");
    }
    RunIndexed(name, f, args, rv, std::index_sequence_for<Args...>());
  }

 private:
  template <size_t I>
  static auto Arg(const std::string& name, const AnyView* args) {
    using T = std::tuple_element_t<I, std::tuple<Args...>>;
    std::optional<T> v = args[I].template try_cast<T>();
    if (!v.has_value()) {
      throw Error("TypeError", "Mismatched type on argument #" + std::to_string(I) + " when calling: `" +
                                   SignatureStr<R, Args...>(name) + "`. Expected `" + TypeTraits<T>::TypeStr() +
                                   "` but got `" + args[I].GetTypeKey() + "`");
    }
    return std::move(*v);
  }
  template <typename F, size_t... I>
  static void RunIndexed(const std::string& name, const F& f, const AnyView* args, Any* rv,
                         std::index_sequence<I...>) {
    (void)name;
    (void)args;
    // Arguments are converted first (left to right), then passed.
    std::tuple<Args...> converted{Arg<I>(name, args)...};
    if constexpr (std::is_void_v<R>) {
      std::invoke(f, std::move(std::get<I>(converted))...);
      *rv = Any();
    } else {
      *rv = Any(std::invoke(f, std::move(std::get<I>(converted))...));
    }
  }
};

/* Call a typed callable with packed arguments. */
template <typename F>
void CallUnpacked(const std::string& name, const F& f, const AnyView* args, int32_t num_args, Any* rv) {
  using Info = FunctionInfo<std::decay_t<F>>;
  Unpacker<typename Info::Return, typename Info::ArgsTuple>::Run(name, f, args, num_args, rv);
}

template <typename Holder>
int PackedSafeCall(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return CallCatching([&] {
    Any rv;
    static_cast<Holder*>(self)->Call(reinterpret_cast<const AnyView*>(args), num_args, &rv);
    *result = rv.ReleaseToRaw();
  });
}

template <typename Holder>
void DeleteHolder(void* self) {
  delete static_cast<Holder*>(self);
}

}  // namespace detail

class Function : public ObjectRef {
 public:
  TETHER_DEFINE_OBJECT_REF_METHODS(Function, ObjectRef, FunctionObj)

  /* From a packed callable: void(const AnyView* args, int32_t num_args, Any* rv). */
  template <typename F>
  static Function FromPacked(F f) {
    struct Holder {
      F f;
      void Call(const AnyView* args, int32_t n, Any* rv) { f(args, n, rv); }
    };
    return Create<Holder>(new Holder{std::move(f)});
  }

  /* From a typed callable; its parameters are checked and converted, and
   * `name` appears in the messages when they do not fit. */
  template <typename F>
  static Function FromTyped(F f, std::string name = "<anonymous>") {
    struct Holder {
      F f;
      std::string name;
      void Call(const AnyView* args, int32_t n, Any* rv) { detail::CallUnpacked(name, f, args, n, rv); }
    };
    return Create<Holder>(new Holder{std::move(f), std::move(name)});
  }

  /* A global function, or nullopt when none has that name. */
  static std::optional<Function> GetGlobal(std::string_view name) {
    TVMFFIByteArray n{name.data(), name.size()};
    TVMFFIObjectHandle out = nullptr;
    detail::CheckCall(TVMFFIFunctionGetGlobal(&n, &out));
    if (out == nullptr) return std::nullopt;
    return Function(detail::UnsafeInit{}, ObjectPtr<Object>::Adopt(static_cast<Object*>(out)));
  }
  /* A global function, or ValueError when none has that name. */
  static Function GetGlobalRequired(std::string_view name) {
    std::optional<Function> f = GetGlobal(name);
    if (!f.has_value()) throw Error("ValueError", "Function " + std::string(name) + " not found");
    return *f;
  }
  static void SetGlobal(std::string_view name, const Function& f, bool allow_override = false) {
    TVMFFIByteArray n{name.data(), name.size()};
    detail::CheckCall(TVMFFIFunctionSetGlobal(&n, detail::Header(f.get()), allow_override ? 1 : 0));
  }

  /* Call with C++ values, each converted to an Any. */
  template <typename... Args>
  Any operator()(Args&&... args) const {
    std::array<Any, sizeof...(Args)> packed{Any(std::forward<Args>(args))...};
    return CallPacked(packed.data(), static_cast<int32_t>(packed.size()));
  }
  Any CallPacked(const Any* args, int32_t num_args) const {
    if (!defined()) throw Error("ValueError", "calling a null Function");
    TVMFFIAny result = TVMFFIAny();
    detail::CheckCall(TVMFFIFunctionCall(detail::Header(get()),
                                         reinterpret_cast<TVMFFIAny*>(const_cast<Any*>(args)), num_args, &result));
    return Any::FromRawOwned(result);
  }

 private:
  template <typename Holder>
  static Function Create(Holder* holder) {
    TVMFFIObjectHandle out = nullptr;
    if (TVMFFIFunctionCreate(holder, &detail::PackedSafeCall<Holder>, &detail::DeleteHolder<Holder>, &out) != 0) {
      delete holder;
      detail::ThrowRaised();
    }
    return Function(detail::UnsafeInit{}, ObjectPtr<Object>::Adopt(static_cast<Object*>(out)));
  }
};

template <typename Sig>
class TypedFunction;

/* A Function with a C++ signature: calls convert the arguments and cast
 * the result (TypeError when it does not fit). */
template <typename R, typename... Args>
class TypedFunction<R(Args...)> {
 public:
  TypedFunction() = default;
  explicit TypedFunction(Function f) : f_(std::move(f)) {}
  template <typename F, typename = std::enable_if_t<std::is_invocable_r_v<R, F, Args...> &&
                                                    !std::is_same_v<std::decay_t<F>, Function> &&
                                                    !std::is_same_v<std::decay_t<F>, TypedFunction>>>
  TypedFunction(F f, std::string name = "<anonymous>")  // NOLINT
      : f_(Function::FromTyped(
            [f = std::move(f)](Args... args) -> R { return f(std::forward<Args>(args)...); }, std::move(name))) {}

  R operator()(Args... args) const {
    Any rv = f_(std::forward<Args>(args)...);
    if constexpr (!std::is_void_v<R>) return rv.template cast<R>();
  }
  const Function& packed() const { return f_; }
  bool defined() const { return f_.defined(); }
  static std::string TypeStr() { return detail::SignatureStr<R, Args...>("Callable"); }

 private:
  Function f_;
};

template <typename R, typename... Args>
struct TypeTraits<TypedFunction<R(Args...)>> {
  static void ToAny(const TypedFunction<R(Args...)>& f, TVMFFIAny* out) { TypeTraits<Function>::ToAny(f.packed(), out); }
  static std::optional<TypedFunction<R(Args...)>> TryCast(const TVMFFIAny& v) {
    if (auto f = TypeTraits<Function>::TryCast(v)) return TypedFunction<R(Args...)>(*f);
    return std::nullopt;
  }
  static std::string TypeStr() { return "ffi.Function"; }
};

namespace detail {

/* A builtin global the layer relies on (ffi.Array, ffi.MapGetItem, ...),
 * looked up once per name and kept for the rest of the process (the table
 * is never destroyed, so no release runs during exit). */
inline const Function& BuiltinFunction(const char* name) {
  static std::mutex* lock = new std::mutex();
  static std::unordered_map<std::string, Function>* table = new std::unordered_map<std::string, Function>();
  std::lock_guard<std::mutex> guard(*lock);
  auto it = table->find(name);
  if (it == table->end()) it = table->emplace(name, Function::GetGlobalRequired(name)).first;
  return it->second;  // node-based map: the reference stays valid
}

}  // namespace detail

#define TETHER_BUILTIN(name)                                                      \
  ([]() -> const ::tether::Function& {                                            \
    static const ::tether::Function& f = ::tether::detail::BuiltinFunction(name); \
    return f;                                                                     \
  }())

/* Defines `int __tvm_ffi_<ExportName>(void*, const TVMFFIAny*, int32_t,
 * TVMFFIAny*)`, a TVMFFISafeCallType entry point calling `Function` with
 * converted arguments: the symbol TVM-FFI's module loaders (and
 * tether.load_module) look up for a function named ExportName. */
#define TETHER_DLL_EXPORT_TYPED_FUNC(ExportName, Function)                                              \
  extern "C" TETHER_DLL_EXPORT int __tvm_ffi_##ExportName(void* self, const TVMFFIAny* args,            \
                                                         int32_t num_args, TVMFFIAny* result) {         \
    (void)self;                                                                                         \
    return ::tether::detail::CallCatching([&] {                                                         \
      ::tether::Any rv;                                                                                 \
      ::tether::detail::CallUnpacked(#ExportName, Function,                                             \
                                     reinterpret_cast<const ::tether::AnyView*>(args), num_args, &rv); \
      *result = rv.ReleaseToRaw();                                                                      \
    });                                                                                                 \
  }

}  // namespace tether

#endif  // TETHER_FUNCTION_H_
