/*
 * tether/containers.h — Array<T>, List<T>, Map<K, V>, Dict<K, V>, Shape,
 * Optional<T>, Variant<Ts...> and Tuple<Ts...>.
 *
 * The objects are the core's, in TVM-FFI's layouts. Where the layout is a
 * plain cell (Array and List: a TVMFFISeqCell; Shape: a TVMFFIShapeCell)
 * elements are read inline; everything else (creating, mutating, hashing
 * a key into a Map or Dict) goes through the core's globals (ffi.Array,
 * ffi.ListAppend, ffi.MapGetItem, ...), so the hashing and locking stay in
 * one place. Array and Map are immutable, List and Dict mutable and shared
 * by reference, as in TVM-FFI. Casting an Any to Array<T> (or the others)
 * checks every element.
 */
#ifndef TETHER_CONTAINERS_H_
#define TETHER_CONTAINERS_H_

#include <tether/function.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tether {

class ArrayObj : public Object {
 public:
  TETHER_DECLARE_STATIC_OBJECT_INFO("ffi.Array", kTVMFFIArray, true)
  TVMFFISeqCell cell;
  const TVMFFIAny* begin() const { return static_cast<const TVMFFIAny*>(cell.data); }
  size_t size() const { return static_cast<size_t>(cell.size); }
};

class ListObj : public Object {
 public:
  TETHER_DECLARE_STATIC_OBJECT_INFO("ffi.List", kTVMFFIList, true)
  TVMFFISeqCell cell;
  const TVMFFIAny* begin() const { return static_cast<const TVMFFIAny*>(cell.data); }
  size_t size() const { return static_cast<size_t>(cell.size); }
};

class MapObj : public Object {
 public:
  TETHER_DECLARE_STATIC_OBJECT_INFO("ffi.Map", kTVMFFIMap, true)
};

class DictObj : public Object {
 public:
  TETHER_DECLARE_STATIC_OBJECT_INFO("ffi.Dict", kTVMFFIDict, true)
};

class ShapeObj : public Object {
 public:
  TETHER_DECLARE_STATIC_OBJECT_INFO("ffi.Shape", kTVMFFIShape, true)
  TVMFFIShapeCell cell;
};

namespace detail {

template <typename T>
bool AllElementsAre(const TVMFFIAny* begin, size_t n) {
  if constexpr (std::is_same_v<T, Any>) {
    return true;
  } else {
    for (size_t i = 0; i < n; ++i) {
      if (!TypeTraits<T>::TryCast(begin[i]).has_value()) return false;
    }
    return true;
  }
}

template <typename T>
T CastElement(const TVMFFIAny& v, const char* container) {
  std::optional<T> r = TypeTraits<T>::TryCast(v);
  if (!r.has_value()) {
    throw Error("TypeError", std::string(container) + " element: Cannot convert from type `" + AnyTypeKey(v) +
                                 "` to `" + TypeTraits<T>::TypeStr() + "`");
  }
  return std::move(*r);
}

template <typename C, typename T>
C MakeSequence(const char* builtin, const std::vector<T>& items) {
  std::vector<Any> packed;
  packed.reserve(items.size());
  for (const T& item : items) packed.emplace_back(item);
  Any r = BuiltinFunction(builtin).CallPacked(packed.data(), static_cast<int32_t>(packed.size()));
  return C(UnsafeInit{}, ObjectPtr<Object>::Borrow(reinterpret_cast<Object*>(r.raw().v_obj)));
}

/* Visit every (key, value) pair of a Map or Dict through its iterator
 * functor (0: key, 1: value, 2: advance, false at the end). */
template <typename Visit>
void ForEachPair(const char* iter_builtin, const char* size_builtin, const ObjectRef& m, Visit visit) {
  if (BuiltinFunction(size_builtin)(m).cast<int64_t>() == 0) return;
  Function it = BuiltinFunction(iter_builtin)(m).cast<Function>();
  do {
    visit(it(0), it(1));
  } while (it(2).cast<bool>());
}

}  // namespace detail

/* An immutable sequence. */
template <typename T = Any>
class Array : public ObjectRef {
 public:
  using ContainerType = ArrayObj;
  Array() : Array(std::vector<T>()) {}
  Array(std::initializer_list<T> items) : Array(std::vector<T>(items)) {}
  explicit Array(const std::vector<T>& items) : Array(detail::MakeSequence<Array>(BuiltinName(), items)) {}
  Array(detail::UnsafeInit tag, ObjectPtr<Object> p) : ObjectRef(tag, std::move(p)) {}

  size_t size() const { return Obj()->size(); }
  bool empty() const { return size() == 0; }
  T operator[](size_t i) const { return detail::CastElement<T>(Obj()->begin()[i], "Array"); }
  /* IndexError when out of range. */
  T at(int64_t i) const {
    if (i < 0 || static_cast<size_t>(i) >= size()) {
      throw Error("IndexError", "Index " + std::to_string(i) + " out of bounds " + std::to_string(size()));
    }
    return (*this)[static_cast<size_t>(i)];
  }
  std::vector<T> to_vector() const {
    std::vector<T> out;
    for (size_t i = 0; i < size(); ++i) out.push_back((*this)[i]);
    return out;
  }
  const ArrayObj* get() const { return Obj(); }

  static bool ElementsMatch(Object* obj) {
    const ArrayObj* a = static_cast<const ArrayObj*>(obj);
    return detail::AllElementsAre<T>(a->begin(), a->size());
  }
  static std::string TypeStr() { return "Array<" + TypeTraits<T>::TypeStr() + ">"; }

 private:
  static const char* BuiltinName() { return "ffi.Array"; }
  const ArrayObj* Obj() const { return static_cast<const ArrayObj*>(data_.get()); }
};

/* A mutable sequence shared by reference; mutation goes through the core,
 * which locks it. */
template <typename T = Any>
class List : public ObjectRef {
 public:
  using ContainerType = ListObj;
  List() : List(std::vector<T>()) {}
  List(std::initializer_list<T> items) : List(std::vector<T>(items)) {}
  explicit List(const std::vector<T>& items) : List(detail::MakeSequence<List>("ffi.List", items)) {}
  List(detail::UnsafeInit tag, ObjectPtr<Object> p) : ObjectRef(tag, std::move(p)) {}

  size_t size() const { return static_cast<size_t>(TETHER_BUILTIN("ffi.ListSize")(*this).template cast<int64_t>()); }
  bool empty() const { return size() == 0; }
  /* IndexError when out of range. */
  T at(int64_t i) const { return TETHER_BUILTIN("ffi.ListGetItem")(*this, i).template cast<T>(); }
  T operator[](int64_t i) const { return at(i); }
  void push_back(const T& v) const { TETHER_BUILTIN("ffi.ListAppend")(*this, v); }
  void set(int64_t i, const T& v) const { TETHER_BUILTIN("ffi.ListSetItem")(*this, i, v); }
  void insert(int64_t i, const T& v) const { TETHER_BUILTIN("ffi.ListInsert")(*this, i, v); }
  /* Remove and return the last item / the item at i (IndexError when out of range). */
  T pop() const { return pop(static_cast<int64_t>(size()) - 1); }
  T pop(int64_t i) const { return TETHER_BUILTIN("ffi.ListPop")(*this, i).template cast<T>(); }
  void erase(int64_t i) const { TETHER_BUILTIN("ffi.ListErase")(*this, i); }
  void clear() const { TETHER_BUILTIN("ffi.ListClear")(*this); }
  std::vector<T> to_vector() const {
    std::vector<T> out;
    const size_t n = size();
    for (size_t i = 0; i < n; ++i) out.push_back(at(static_cast<int64_t>(i)));
    return out;
  }

  static bool ElementsMatch(Object* obj) {
    const ListObj* l = static_cast<const ListObj*>(obj);
    return detail::AllElementsAre<T>(l->begin(), l->size());
  }
  static std::string TypeStr() { return "List<" + TypeTraits<T>::TypeStr() + ">"; }
};

namespace detail {

template <typename C, typename K, typename V>
C MakeMapping(const char* builtin, const std::vector<std::pair<K, V>>& items) {
  std::vector<Any> packed;
  packed.reserve(items.size() * 2);
  for (const auto& kv : items) {
    packed.emplace_back(kv.first);
    packed.emplace_back(kv.second);
  }
  Any r = BuiltinFunction(builtin).CallPacked(packed.data(), static_cast<int32_t>(packed.size()));
  return C(UnsafeInit{}, ObjectPtr<Object>::Borrow(reinterpret_cast<Object*>(r.raw().v_obj)));
}

template <typename K, typename V>
bool AllPairsAre(const char* iter, const char* size, const ObjectRef& m) {
  if constexpr (std::is_same_v<K, Any> && std::is_same_v<V, Any>) {
    return true;
  } else {
    bool ok = true;
    ForEachPair(iter, size, m, [&](const Any& k, const Any& v) {
      ok = ok && k.try_cast<K>().has_value() && v.try_cast<V>().has_value();
    });
    return ok;
  }
}

}  // namespace detail

/* What Map and Dict share: lookups through the core's hashing. */
template <typename K, typename V, typename Obj, const char* const* kNames>
class MappingBase : public ObjectRef {
 public:
  using ContainerType = Obj;
  MappingBase(detail::UnsafeInit tag, ObjectPtr<Object> p) : ObjectRef(tag, std::move(p)) {}

  size_t size() const { return static_cast<size_t>(Call(1, *this).template cast<int64_t>()); }
  bool empty() const { return size() == 0; }
  size_t count(const K& key) const { return static_cast<size_t>(Call(2, *this, key).template cast<int64_t>()); }
  /* KeyError when absent. */
  V at(const K& key) const { return Call(3, *this, key).template cast<V>(); }
  V operator[](const K& key) const { return at(key); }
  std::optional<V> get(const K& key) const {
    if (count(key) == 0) return std::nullopt;
    return at(key);
  }
  /* The pairs in the container's iteration order. */
  std::vector<std::pair<K, V>> items() const {
    std::vector<std::pair<K, V>> out;
    detail::ForEachPair(kNames[4], kNames[1], *this,
                        [&](const Any& k, const Any& v) { out.emplace_back(k.cast<K>(), v.cast<V>()); });
    return out;
  }
  static bool ElementsMatch(Object* obj) {
    return detail::AllPairsAre<K, V>(kNames[4], kNames[1], ObjectRef(ObjectPtr<Object>::Borrow(obj)));
  }

 protected:
  template <typename... Args>
  static Any Call(int which, Args&&... args) {
    return detail::BuiltinFunction(kNames[which])(std::forward<Args>(args)...);
  }
};

namespace detail {
inline constexpr const char* kMapNames[] = {"ffi.Map", "ffi.MapSize", "ffi.MapCount", "ffi.MapGetItem",
                                            "ffi.MapForwardIterFunctor"};
inline constexpr const char* kDictNames[] = {"ffi.Dict", "ffi.DictSize", "ffi.DictCount", "ffi.DictGetItem",
                                             "ffi.DictForwardIterFunctor"};
}  // namespace detail

/* An immutable hash map (TVM-FFI's small/dense cells, built by the core). */
template <typename K = Any, typename V = Any>
class Map : public MappingBase<K, V, MapObj, detail::kMapNames> {
  using Base = MappingBase<K, V, MapObj, detail::kMapNames>;

 public:
  Map() : Map(std::vector<std::pair<K, V>>()) {}
  Map(std::initializer_list<std::pair<K, V>> items) : Map(std::vector<std::pair<K, V>>(items)) {}
  explicit Map(const std::vector<std::pair<K, V>>& items) : Map(detail::MakeMapping<Map>("ffi.Map", items)) {}
  Map(detail::UnsafeInit tag, ObjectPtr<Object> p) : Base(tag, std::move(p)) {}
  static std::string TypeStr() { return "Map<" + TypeTraits<K>::TypeStr() + ", " + TypeTraits<V>::TypeStr() + ">"; }
};

/* A mutable hash map shared by reference. */
template <typename K = Any, typename V = Any>
class Dict : public MappingBase<K, V, DictObj, detail::kDictNames> {
  using Base = MappingBase<K, V, DictObj, detail::kDictNames>;

 public:
  Dict() : Dict(std::vector<std::pair<K, V>>()) {}
  Dict(std::initializer_list<std::pair<K, V>> items) : Dict(std::vector<std::pair<K, V>>(items)) {}
  explicit Dict(const std::vector<std::pair<K, V>>& items) : Dict(detail::MakeMapping<Dict>("ffi.Dict", items)) {}
  Dict(detail::UnsafeInit tag, ObjectPtr<Object> p) : Base(tag, std::move(p)) {}

  void set(const K& key, const V& value) const { TETHER_BUILTIN("ffi.DictSetItem")(*this, key, value); }
  void erase(const K& key) const { TETHER_BUILTIN("ffi.DictErase")(*this, key); }
  void clear() const { TETHER_BUILTIN("ffi.DictClear")(*this); }
  static std::string TypeStr() { return "Dict<" + TypeTraits<K>::TypeStr() + ", " + TypeTraits<V>::TypeStr() + ">"; }
};

/* An immutable tuple of int64 dimensions, read inline. */
class Shape : public ObjectRef {
 public:
  using ContainerType = ShapeObj;
  Shape() : Shape(std::vector<int64_t>()) {}
  Shape(std::initializer_list<int64_t> dims) : Shape(std::vector<int64_t>(dims)) {}
  explicit Shape(const std::vector<int64_t>& dims) : Shape(detail::MakeSequence<Shape>("ffi.Shape", dims)) {}
  Shape(detail::UnsafeInit tag, ObjectPtr<Object> p) : ObjectRef(tag, std::move(p)) {}

  size_t size() const { return Cell().size; }
  int64_t operator[](size_t i) const { return Cell().data[i]; }
  const int64_t* begin() const { return Cell().data; }
  const int64_t* end() const { return Cell().data + Cell().size; }
  int64_t product() const {
    int64_t p = 1;
    for (int64_t d : *this) p *= d;
    return p;
  }

 private:
  const TVMFFIShapeCell& Cell() const { return static_cast<const ShapeObj*>(data_.get())->cell; }
};

/* A T or nothing (None across the ABI). */
template <typename T>
class Optional {
 public:
  Optional() = default;
  Optional(std::nullopt_t) {}           // NOLINT
  Optional(std::nullptr_t) {}           // NOLINT
  Optional(T value) : v_(std::move(value)) {}  // NOLINT
  bool has_value() const { return v_.has_value(); }
  explicit operator bool() const { return has_value(); }
  /* ValueError when empty. */
  const T& value() const {
    if (!v_) throw Error("ValueError", "Optional<" + TypeTraits<T>::TypeStr() + "> has no value");
    return *v_;
  }
  T value_or(T other) const { return v_ ? *v_ : std::move(other); }
  const T& operator*() const { return *v_; }
  const T* operator->() const { return &*v_; }

 private:
  std::optional<T> v_;
};

template <typename T>
struct TypeTraits<Optional<T>> {
  static void ToAny(const Optional<T>& o, TVMFFIAny* out) {
    if (o.has_value()) {
      TypeTraits<T>::ToAny(*o, out);
    } else {
      *out = TVMFFIAny();
    }
  }
  static std::optional<Optional<T>> TryCast(const TVMFFIAny& v) {
    if (v.type_index == kTVMFFINone) return Optional<T>();
    if (auto r = TypeTraits<T>::TryCast(v)) return Optional<T>(std::move(*r));
    return std::nullopt;
  }
  static std::string TypeStr() { return "Optional<" + TypeTraits<T>::TypeStr() + ">"; }
};

/* One value of the listed types, kept as the first type it converts to. */
template <typename... Ts>
class Variant {
 public:
  template <typename T, typename = std::enable_if_t<(std::is_same_v<std::decay_t<T>, Ts> || ...)>>
  Variant(const T& v) : data_(v) {}  // NOLINT
  /* The value as a T, or nullopt when it holds another type. */
  template <typename T>
  std::optional<T> as() const {
    return data_.try_cast<T>();
  }
  template <typename T>
  T get() const {
    return data_.cast<T>();
  }
  const Any& any() const { return data_; }

  static std::optional<Variant> TryCast(const TVMFFIAny& v) {
    std::optional<Variant> out;
    ((out.has_value() ? void() : Try<Ts>(v, &out)), ...);
    return out;
  }
  static std::string TypeStr() {
    std::string s = "Variant<";
    size_t i = 0;
    ((s += (i++ ? ", " : "") + TypeTraits<Ts>::TypeStr()), ...);
    return s + ">";
  }

 private:
  struct FromAny {};
  Variant(FromAny, Any a) : data_(std::move(a)) {}
  template <typename T>
  static void Try(const TVMFFIAny& v, std::optional<Variant>* out) {
    if (auto r = TypeTraits<T>::TryCast(v)) *out = Variant(FromAny{}, Any(*r));
  }
  Any data_;
};

template <typename... Ts>
struct TypeTraits<Variant<Ts...>> {
  static void ToAny(const Variant<Ts...>& v, TVMFFIAny* out) { TypeTraits<Any>::ToAny(v.any(), out); }
  static std::optional<Variant<Ts...>> TryCast(const TVMFFIAny& v) { return Variant<Ts...>::TryCast(v); }
  static std::string TypeStr() { return Variant<Ts...>::TypeStr(); }
};

/* A fixed-size heterogeneous sequence (an ffi.Array underneath). */
template <typename... Ts>
class Tuple : public ObjectRef {
 public:
  using ContainerType = ArrayObj;
  Tuple(const Ts&... items) : Tuple(detail::MakeSequence<Tuple>("ffi.Array", std::vector<Any>{Any(items)...})) {}
  Tuple(detail::UnsafeInit tag, ObjectPtr<Object> p) : ObjectRef(tag, std::move(p)) {}

  template <size_t I>
  auto get() const {
    using T = std::tuple_element_t<I, std::tuple<Ts...>>;
    return detail::CastElement<T>(static_cast<const ArrayObj*>(data_.get())->begin()[I], "Tuple");
  }
  static constexpr size_t size() { return sizeof...(Ts); }

  static bool ElementsMatch(Object* obj) {
    const ArrayObj* a = static_cast<const ArrayObj*>(obj);
    return a->size() == sizeof...(Ts) && Match(a->begin(), std::index_sequence_for<Ts...>());
  }
  static std::string TypeStr() {
    std::string s = "Tuple<";
    size_t i = 0;
    ((s += (i++ ? ", " : "") + TypeTraits<Ts>::TypeStr()), ...);
    return s + ">";
  }

 private:
  template <size_t... I>
  static bool Match(const TVMFFIAny* items, std::index_sequence<I...>) {
    return (TypeTraits<Ts>::TryCast(items[I]).has_value() && ...);
  }
};

}  // namespace tether

#endif  // TETHER_CONTAINERS_H_
