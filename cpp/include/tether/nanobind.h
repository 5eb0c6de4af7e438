/*
 * tether/nanobind.h — nanobind type casters for tether's C++ types, so a
 * function bound with nanobind takes and returns tether objects (every
 * ObjectRef type: user types, Array, List, Map, Dict, Function, Tensor,
 * Error), Any, String and Bytes, exactly as a tether Function would.
 *
 *   #include <tether/nanobind.h>
 *   NB_MODULE(geometry_nb, m) {
 *     tether::nanobind_interop::install(m);  // tether::Error -> its Python exception
 *     m.def("identity", [](tether::ObjectRef x) { return x; });
 *   }
 *
 * Both directions go through tether's own Python conversions, never
 * around them, so identity holds as it does for tether Functions (one
 * wrapper per native object: `m.identity(x) is x`, `a.x is a.x`):
 *
 *   C++ -> Python: the value is placed, owned, in a TVMFFIAny slot on the
 *   caster's stack; a tether Function made from the safe-call TakeFromSlot
 *   (through tether._ffi.function_from_symbol) is called with the slot's
 *   address and returns the value moved out of it. tether's call path
 *   then converts the result, objects through the extension's one return
 *   path (make_ret_object), which finds the existing wrapper or ties a
 *   new one.
 *
 *   Python -> C++: a tether wrapper gives its handle (tether._ffi.chandle)
 *   and the caster takes a new reference. Any other value (int, str, a
 *   list, a callable, a DLPack tensor) is only accepted in nanobind's
 *   converting pass: it is passed to a tether Function made from
 *   StoreToSlot, so tether's argument conversion turns it into an FFI value
 *   that is copied into the caster's slot. Then TypeTraits<T>::TryCast
 *   decides, with the same rules as a typed tether Function.
 *
 *   Errors: install(m) registers a translator that raises a thrown
 *   tether::Error through a tether Function made from RaiseFromSlot, so
 *   the Python exception is the one tether itself would raise for it
 *   (kind mapped to the exception class, the same ffi.Error attached).
 *
 * The three entry-point Functions take raw addresses, so they are never
 * handed to Python code: they live in this library's Bridge only. They are
 * created on first use with the GIL held (free-threaded builds are not
 * supported by this header yet).
 */
#ifndef TETHER_NANOBIND_H_
#define TETHER_NANOBIND_H_

#include <tether/tether.h>

#include <nanobind/nanobind.h>

#include <cstdint>
#include <exception>
#include <type_traits>

namespace tether {
namespace nanobind_interop {

namespace detail {

inline TVMFFIAny* SlotAt(const TVMFFIAny& address) {
  if (address.type_index != kTVMFFIInt || address.v_int64 == 0) {
    throw Error("TypeError", "tether.nanobind: expected a slot address");
  }
  return reinterpret_cast<TVMFFIAny*>(static_cast<uintptr_t>(address.v_int64));
}

/* (slot_address) -> the value the slot owned; the slot is left None. */
inline int TakeFromSlot(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return ::tether::detail::CallCatching([&] {
    if (num_args != 1) throw Error("TypeError", "tether.nanobind: TakeFromSlot takes 1 argument");
    TVMFFIAny* slot = SlotAt(args[0]);
    *result = *slot;
    *slot = TVMFFIAny();
  });
}

/* (value, slot_address) -> None; the slot receives an owned copy of value. */
inline int StoreToSlot(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return ::tether::detail::CallCatching([&] {
    if (num_args != 2) throw Error("TypeError", "tether.nanobind: StoreToSlot takes 2 arguments");
    TVMFFIAny* slot = SlotAt(args[1]);
    ::tether::detail::CheckCall(TVMFFIAnyViewToOwnedAny(&args[0], slot));
    *result = TVMFFIAny();
  });
}

/* (slot_address) -> raises the ffi.Error the slot owns. */
inline int RaiseFromSlot(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny*) {
  try {
    if (num_args != 1) throw Error("TypeError", "tether.nanobind: RaiseFromSlot takes 1 argument");
    TVMFFIAny* slot = SlotAt(args[0]);
    if (slot->type_index != kTVMFFIError) throw Error("TypeError", "tether.nanobind: the slot holds no ffi.Error");
    TVMFFIErrorSetRaised(slot->v_obj);  // takes its own reference
    ::tether::detail::ReleaseRaw(slot);
    return -1;
  } catch (...) {
    return ::tether::detail::CallCatching([] { throw; });
  }
}

/* The Python objects the casters use, looked up once per library. Hidden,
 * as nanobind's own types are (GCC warns when a type is more visible than
 * its fields); nanobind 2 (the last for CPython 3.9) has no NB_HIDDEN. */
#if defined(NB_HIDDEN)
#define TETHER_NB_HIDDEN NB_HIDDEN
#elif defined(_WIN32)
#define TETHER_NB_HIDDEN
#else
#define TETHER_NB_HIDDEN __attribute__((visibility("hidden")))
#endif
struct TETHER_NB_HIDDEN Bridge {
  ::nanobind::object take;       // tether Function over TakeFromSlot
  ::nanobind::object store;      // tether Function over StoreToSlot
  ::nanobind::object raise;      // tether Function over RaiseFromSlot
  ::nanobind::object chandle;    // tether._ffi.chandle
  ::nanobind::handle base_type;  // tether._ffi.CObject, the base of every wrapper
};

/* Never destroyed: the Python objects outlive interpreter finalisation
 * rather than being released after it. Needs the GIL. */
inline Bridge& GetBridge() {
  static Bridge* bridge = nullptr;
  if (bridge == nullptr) {
    namespace nb = ::nanobind;
    nb::module_ ffi = nb::module_::import_("tether._ffi");
    nb::object from_symbol = ffi.attr("function_from_symbol");
    auto* b = new Bridge();
    b->take = from_symbol(reinterpret_cast<uintptr_t>(&TakeFromSlot));
    b->store = from_symbol(reinterpret_cast<uintptr_t>(&StoreToSlot));
    b->raise = from_symbol(reinterpret_cast<uintptr_t>(&RaiseFromSlot));
    b->chandle = ffi.attr("chandle");
    b->base_type = nb::object(ffi.attr("CObject")).release();
    bridge = b;
  }
  return *bridge;
}

inline uintptr_t AddressOf(TVMFFIAny* slot) { return reinterpret_cast<uintptr_t>(slot); }

/* An owned FFI value for a Python object, or false (no Python error set).
 * Without `convert` only tether wrappers (and None) are accepted. */
inline bool PythonToAny(::nanobind::handle src, bool convert, TVMFFIAny* out) noexcept {
  namespace nb = ::nanobind;
  try {
    Bridge& b = GetBridge();
    if (src.is_none()) {
      *out = TVMFFIAny();
      return true;
    }
    if (PyObject_TypeCheck(src.ptr(), reinterpret_cast<PyTypeObject*>(b.base_type.ptr()))) {
      uintptr_t h = nb::cast<uintptr_t>(b.chandle(src));
      if (h == 0) return false;  // a wrapper whose object was moved out
      TVMFFIObject* obj = reinterpret_cast<TVMFFIObject*>(h);
      ::tether::detail::IncRef(obj);
      out->type_index = obj->type_index;
      out->v_obj = obj;
      return true;
    }
    if (!convert) return false;
    TVMFFIAny slot = TVMFFIAny();
    b.store(src, AddressOf(&slot));
    *out = slot;
    return true;
  } catch (nb::python_error&) {
    return false;  // the caught error owns (and drops) the Python exception
  } catch (...) {
    PyErr_Clear();
    return false;
  }
}

/* A new reference to the Python object for an owned FFI value (consumed),
 * or a null handle with the Python error set. */
inline ::nanobind::handle AnyToPython(TVMFFIAny value) noexcept {
  namespace nb = ::nanobind;
  TVMFFIAny slot = value;
  try {
    nb::object r = GetBridge().take(AddressOf(&slot));
    return r.release();
  } catch (nb::python_error& e) {
    ::tether::detail::ReleaseRaw(&slot);
    e.restore();
  } catch (const std::exception& e) {
    ::tether::detail::ReleaseRaw(&slot);
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nb::handle();
}

/* Raise `error` as tether raises it from a Function call. */
inline void RaiseInPython(const Error& error) noexcept {
  namespace nb = ::nanobind;
  TVMFFIAny slot = TVMFFIAny();
  TypeTraits<Error>::ToAny(error, &slot);
  try {
    GetBridge().raise(AddressOf(&slot));
    PyErr_SetString(PyExc_RuntimeError, error.what());  // unreachable: raise always raises
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  ::tether::detail::ReleaseRaw(&slot);
}

/* The Python annotation a caster shows in nanobind's signatures (and so
 * in nanobind's stubgen): the tether class for the well-known types. */
template <typename T>
struct PyName {
  static constexpr auto name = ::nanobind::detail::const_name("tether.Object");
};
template <typename E>
struct PyName<Array<E>> {
  static constexpr auto name = ::nanobind::detail::const_name("tether.Array");
};
template <typename E>
struct PyName<List<E>> {
  static constexpr auto name = ::nanobind::detail::const_name("tether.List");
};
template <>
struct PyName<Function> {
  static constexpr auto name = ::nanobind::detail::const_name("tether.Function");
};
template <>
struct PyName<Tensor> {
  static constexpr auto name = ::nanobind::detail::const_name("tether.Tensor");
};
template <>
struct PyName<Any> {
  static constexpr auto name = ::nanobind::detail::const_name("typing.Any");
};
template <>
struct PyName<String> {
  static constexpr auto name = ::nanobind::detail::const_name("str");
};
template <>
struct PyName<Bytes> {
  static constexpr auto name = ::nanobind::detail::const_name("bytes");
};

}  // namespace detail

/* Registers the translation of tether::Error for functions of module `m`
 * (the translator is process-wide in nanobind; call it from NB_MODULE). */
inline void install(::nanobind::module_& m) {
  (void)m;
  ::nanobind::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      detail::RaiseInPython(e);
    }
  });
}

}  // namespace nanobind_interop
}  // namespace tether

NAMESPACE_BEGIN(NB_NAMESPACE)
NAMESPACE_BEGIN(detail)

/* One caster for every type TypeTraits converts. */
template <typename T>
struct tether_caster {
  NB_TYPE_CASTER(T, ::tether::nanobind_interop::detail::PyName<T>::name)

  bool from_python(handle src, uint8_t flags, cleanup_list*) noexcept {
    TVMFFIAny raw;
    const bool convert = (flags & static_cast<uint8_t>(cast_flags::convert)) != 0;
    if (!::tether::nanobind_interop::detail::PythonToAny(src, convert, &raw)) return false;
    try {
      ::tether::Any owned = ::tether::Any::FromRawOwned(raw);
      std::optional<T> v = ::tether::TypeTraits<T>::TryCast(owned.raw());
      if (!v.has_value()) return false;
      value = std::move(*v);
      return true;
    } catch (...) {
      return false;
    }
  }

  static handle from_cpp(const T& v, rv_policy, cleanup_list*) noexcept {
    TVMFFIAny raw = TVMFFIAny();
    try {
      ::tether::TypeTraits<T>::ToAny(v, &raw);
    } catch (const std::exception& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
      return handle();
    }
    return ::tether::nanobind_interop::detail::AnyToPython(raw);
  }
};


template <typename T>
struct type_caster<T, enable_if_t<std::is_base_of_v<::tether::ObjectRef, T>>>
    : tether_caster<T> {};
template <>
struct type_caster<::tether::Any> : tether_caster<::tether::Any> {};
template <>
struct type_caster<::tether::String> : tether_caster<::tether::String> {};
template <>
struct type_caster<::tether::Bytes> : tether_caster<::tether::Bytes> {};

NAMESPACE_END(detail)
NAMESPACE_END(NB_NAMESPACE)

#endif  // TETHER_NANOBIND_H_
