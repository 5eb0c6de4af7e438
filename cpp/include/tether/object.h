/*
 * tether/object.h — objects and the pointers that own them.
 *
 * An Object is laid out as TVM-FFI's: the 24-byte TVMFFIObject header
 * first, then the subclass's members. Subclasses use single inheritance
 * and no virtual functions, so an object's address is its header's and a
 * handle crosses the C ABI unchanged. make_object allocates through the
 * core's allocator registry (TVMFFIGetCustomAllocator), so a block carries a
 * TVMFFIObjectAllocHeader and the object carries
 * TETHER_OBJECT_MARKER_REGISTRY_ALLOCATED: tether's Python side then keeps
 * one wrapper per object, as for objects the core allocates itself.
 *
 * Reference counting follows the core (rust/core/src/object/mod.rs): strong
 * count in the low half of combined_ref_count, weak in the high half; the
 * last strong reference calls the deleter with Strong (destroy the
 * contents) and then drops the weak reference all strong ones share, whose
 * last release calls it with Weak (give the block back); both at once is
 * one call with Both.
 */
#ifndef TETHER_OBJECT_H_
#define TETHER_OBJECT_H_

#include <tether/base.h>

#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

namespace tether {

class Object;
template <typename T>
class ObjectPtr;

namespace detail {

/* Constructor tag for building a typed reference from an untyped pointer
 * whose type the caller has already checked. */
struct UnsafeInit {};

inline TVMFFIObject* Header(const Object* obj) {
  return reinterpret_cast<TVMFFIObject*>(const_cast<Object*>(obj));
}

inline void IncRef(TVMFFIObject* obj) { AtomicFetchAddRelaxed(&obj->combined_ref_count, kCombinedStrongOne); }

inline void IncWeak(TVMFFIObject* obj) { AtomicFetchAddRelaxed(&obj->combined_ref_count, kCombinedWeakOne); }

inline void CallDeleter(TVMFFIObject* obj, int flags) {
  if (obj->deleter != nullptr) obj->deleter(obj, flags);
}

inline void DecWeak(TVMFFIObject* obj) {
  if (AtomicFetchSubRelease(&obj->combined_ref_count, kCombinedWeakOne) == kCombinedWeakOne) {
    AtomicAcquireAfterRelease(&obj->combined_ref_count);
    CallDeleter(obj, kTVMFFIObjectDeleterFlagBitMaskWeak);
  }
}

inline void DecRef(TVMFFIObject* obj) {
  uint64_t before = AtomicFetchSubRelease(&obj->combined_ref_count, kCombinedStrongOne);
  if (before == kCombinedBothOne) {
    AtomicAcquireAfterRelease(&obj->combined_ref_count);
    CallDeleter(obj, kTVMFFIObjectDeleterFlagBitMaskBoth);
  } else if ((before & kStrongMask) == kCombinedStrongOne) {
    AtomicAcquireAfterRelease(&obj->combined_ref_count);
    CallDeleter(obj, kTVMFFIObjectDeleterFlagBitMaskStrong);
    DecWeak(obj);
  }
}

/* A strong reference from a weak one, if the object still lives. */
inline bool TryPromoteWeak(TVMFFIObject* obj) {
  uint64_t cur = AtomicLoadRelaxed(&obj->combined_ref_count);
  while ((cur & kStrongMask) != 0) {
    if (AtomicCompareExchange(&obj->combined_ref_count, &cur, cur + kCombinedStrongOne)) return true;
  }
  return false;
}

/* Registers (or finds) a run-time type under `key` below `parent`. */
inline int32_t RegisterObjectType(const char* key, int32_t parent_index, bool final_type);

/* The depth of a registered type (0 for ffi.Object). */
inline int32_t TypeDepthOf(int32_t type_index);

/* A type's key, or "<unknown type N>". */
inline std::string TypeKeyOf(int32_t type_index);

}  // namespace detail

/* The root of every object type. */
class Object {
 public:
  static constexpr const char* _type_key = "ffi.Object";
  static constexpr bool _type_final = false;
  static int32_t RuntimeTypeIndex() { return kTVMFFIObject; }

  Object() : header_() {}
  /* Copying an object copies its members, never its header: the copy is
   * a new object with its own counts (make_object<T>(*other)). */
  Object(const Object&) : header_() {}
  Object& operator=(const Object&) { return *this; }
  ~Object() = default;

  int32_t type_index() const { return header_.type_index; }
  std::string GetTypeKey() const { return detail::TypeKeyOf(header_.type_index); }
  /* Whether this object is a T or derives from it. */
  template <typename T>
  bool IsInstance() const;
  /* The strong count (a snapshot, for tests and diagnostics). */
  uint32_t use_count() const {
    return static_cast<uint32_t>(detail::AtomicLoadRelaxed(&header_.combined_ref_count) &
                                 detail::kStrongMask);
  }
  uint32_t weak_count() const {
    return static_cast<uint32_t>(detail::AtomicLoadRelaxed(&header_.combined_ref_count) >> 32);
  }

 protected:
  TVMFFIObject header_;

  template <typename T, typename... Args>
  friend ObjectPtr<T> make_object(Args&&... args);
  template <typename T, typename E, typename... Args>
  friend ObjectPtr<T> make_inplace_array_object(size_t num_elems, Args&&... args);
};

static_assert(sizeof(Object) == sizeof(TVMFFIObject), "Object is exactly the C header");

template <typename T>
inline bool Object::IsInstance() const {
  if constexpr (std::is_same_v<T, Object>) {
    return true;
  } else {
    const int32_t target = T::RuntimeTypeIndex();
    if (header_.type_index == target) return true;
    if constexpr (T::_type_final) {
      return false;
    } else {
      static const int32_t target_depth = detail::TypeDepthOf(target);
      const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(header_.type_index);
      return info != nullptr && target_depth >= 0 && info->type_depth > target_depth &&
             info->type_ancestors[target_depth]->type_index == target;
    }
  }
}

/* An owning pointer: one strong reference. */
template <typename T>
class ObjectPtr {
 public:
  using element_type = T;

  ObjectPtr() = default;
  ObjectPtr(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)
  ObjectPtr(const ObjectPtr& other) : ptr_(other.ptr_) { IncIfSet(); }
  ObjectPtr(ObjectPtr&& other) noexcept : ptr_(other.ptr_) { other.ptr_ = nullptr; }
  template <typename U, typename = std::enable_if_t<std::is_base_of_v<T, U>>>
  ObjectPtr(const ObjectPtr<U>& other) : ptr_(other.get()) {  // NOLINT
    IncIfSet();
  }
  template <typename U, typename = std::enable_if_t<std::is_base_of_v<T, U>>>
  ObjectPtr(ObjectPtr<U>&& other) noexcept : ptr_(other.release()) {}  // NOLINT
  ~ObjectPtr() { reset(); }

  ObjectPtr& operator=(ObjectPtr other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  /* Adopt a strong reference the caller owns. */
  static ObjectPtr Adopt(T* ptr) {
    ObjectPtr p;
    p.ptr_ = ptr;
    return p;
  }
  /* Take a new strong reference on a live object. */
  static ObjectPtr Borrow(T* ptr) {
    ObjectPtr p;
    p.ptr_ = ptr;
    p.IncIfSet();
    return p;
  }

  T* get() const { return ptr_; }
  T* operator->() const { return ptr_; }
  T& operator*() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }
  uint32_t use_count() const { return ptr_ == nullptr ? 0 : ptr_->use_count(); }
  bool unique() const { return use_count() == 1; }

  void reset() {
    if (ptr_ != nullptr) {
      T* p = ptr_;
      ptr_ = nullptr;
      detail::DecRef(detail::Header(p));
    }
  }
  /* Give up ownership of the reference without releasing it. */
  T* release() {
    T* p = ptr_;
    ptr_ = nullptr;
    return p;
  }

  friend bool operator==(const ObjectPtr& a, const ObjectPtr& b) { return a.ptr_ == b.ptr_; }
  friend bool operator!=(const ObjectPtr& a, const ObjectPtr& b) { return a.ptr_ != b.ptr_; }
  friend bool operator==(const ObjectPtr& a, std::nullptr_t) { return a.ptr_ == nullptr; }
  friend bool operator!=(const ObjectPtr& a, std::nullptr_t) { return a.ptr_ != nullptr; }

 private:
  void IncIfSet() {
    if (ptr_ != nullptr) detail::IncRef(detail::Header(ptr_));
  }
  T* ptr_ = nullptr;
};

/* A weak reference: keeps the block, not the contents. */
template <typename T>
class WeakObjectPtr {
 public:
  WeakObjectPtr() = default;
  explicit WeakObjectPtr(const ObjectPtr<T>& strong) : ptr_(strong.get()) {
    if (ptr_ != nullptr) detail::IncWeak(detail::Header(ptr_));
  }
  WeakObjectPtr(const WeakObjectPtr& other) : ptr_(other.ptr_) {
    if (ptr_ != nullptr) detail::IncWeak(detail::Header(ptr_));
  }
  WeakObjectPtr(WeakObjectPtr&& other) noexcept : ptr_(other.ptr_) { other.ptr_ = nullptr; }
  WeakObjectPtr& operator=(WeakObjectPtr other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }
  ~WeakObjectPtr() { reset(); }

  void reset() {
    if (ptr_ != nullptr) {
      T* p = ptr_;
      ptr_ = nullptr;
      detail::DecWeak(detail::Header(p));
    }
  }
  /* A strong pointer, or null once the object was destroyed. */
  ObjectPtr<T> lock() const {
    if (ptr_ == nullptr || !detail::TryPromoteWeak(detail::Header(ptr_))) return ObjectPtr<T>();
    return ObjectPtr<T>::Adopt(ptr_);
  }
  bool expired() const {
    return ptr_ == nullptr ||
           (detail::AtomicLoadRelaxed(&detail::Header(ptr_)->combined_ref_count) & detail::kStrongMask) == 0;
  }

 private:
  T* ptr_ = nullptr;
};

namespace detail {

/* The deleter of every object make_object builds: destroy T on Strong,
 * give the block back through its allocation header on Weak. */
template <typename T>
void ObjectDeleter(void* self, int flags) {
  T* obj = static_cast<T*>(reinterpret_cast<Object*>(self));
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) obj->~T();
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) {
    TVMFFIObjectAllocHeader* alloc = reinterpret_cast<TVMFFIObjectAllocHeader*>(self) - 1;
    alloc->delete_space(self);
  }
}

/* A block from the installed allocator: header filled in, body uninitialised. */
inline void* AllocateBody(size_t size, size_t alignment, int32_t type_index) {
  TVMFFICustomAllocator* allocator = TVMFFIGetCustomAllocator();
  void* body = allocator == nullptr || allocator->allocate == nullptr
                   ? nullptr
                   : allocator->allocate(size, alignment, type_index, allocator->context);
  if (body == nullptr) throw std::bad_alloc();
  return body;
}

inline void FreeBody(void* body) {
  TVMFFIObjectAllocHeader* alloc = reinterpret_cast<TVMFFIObjectAllocHeader*>(body) - 1;
  alloc->delete_space(body);
}

template <typename T>
T* FinishObject(T* obj, int32_t type_index) {
  TVMFFIObject* h = Header(obj);
  h->combined_ref_count = kCombinedBothOne;
  h->type_index = type_index;
  h->__padding = TETHER_OBJECT_MARKER_REGISTRY_ALLOCATED;
  h->deleter = &ObjectDeleter<T>;
  return obj;
}

template <typename T>
void CheckObjectLayout() {
  static_assert(std::is_base_of_v<Object, T>, "T must derive from tether::Object");
  static_assert(!std::is_polymorphic_v<T>, "objects have no virtual functions: the header must come first");
}

}  // namespace detail

/* A new T built from args, allocated through the core's allocator registry.
 * If T's constructor throws, the block goes back through its allocation
 * header's delete_space and the exception propagates; allocation failure
 * throws std::bad_alloc. */
template <typename T, typename... Args>
ObjectPtr<T> make_object(Args&&... args) {
  detail::CheckObjectLayout<T>();
  const int32_t type_index = T::RuntimeTypeIndex();
  void* body = detail::AllocateBody(sizeof(T), alignof(T), type_index);
  T* obj;
  try {
    obj = new (body) T(std::forward<Args>(args)...);
  } catch (...) {
    detail::FreeBody(body);
    throw;
  }
  return ObjectPtr<T>::Adopt(detail::FinishObject(obj, type_index));
}

/* A new T followed in the same block by room for num_elems elements of E
 * (left uninitialised, aligned for E): T's constructor and destructor own
 * the elements it places there. Failure is handled as for make_object. */
template <typename T, typename E, typename... Args>
ObjectPtr<T> make_inplace_array_object(size_t num_elems, Args&&... args) {
  detail::CheckObjectLayout<T>();
  static_assert(sizeof(T) % alignof(E) == 0, "the elements must start aligned right after T");
  const int32_t type_index = T::RuntimeTypeIndex();
  if (num_elems > (SIZE_MAX - sizeof(T)) / sizeof(E)) throw std::bad_alloc();
  const size_t alignment = alignof(T) > alignof(E) ? alignof(T) : alignof(E);
  void* body = detail::AllocateBody(sizeof(T) + num_elems * sizeof(E), alignment, type_index);
  T* obj;
  try {
    obj = new (body) T(std::forward<Args>(args)...);
  } catch (...) {
    detail::FreeBody(body);
    throw;
  }
  return ObjectPtr<T>::Adopt(detail::FinishObject(obj, type_index));
}

/* Whether an object was allocated through the registry (so an allocation
 * header precedes it). */
inline bool IsRegistryAllocated(const Object* obj) {
  return obj != nullptr && (detail::Header(obj)->__padding & TETHER_OBJECT_MARKER_REGISTRY_ALLOCATED) != 0;
}

/* A nullable, untyped reference; the base of every typed reference. */
class ObjectRef {
 public:
  using ContainerType = Object;

  ObjectRef() = default;
  explicit ObjectRef(ObjectPtr<Object> data) : data_(std::move(data)) {}
  ObjectRef(detail::UnsafeInit, ObjectPtr<Object> data) : data_(std::move(data)) {}

  const Object* get() const { return data_.get(); }
  const Object* operator->() const { return data_.get(); }
  bool defined() const { return data_ != nullptr; }
  bool same_as(const ObjectRef& other) const { return data_ == other.data_; }
  uint32_t use_count() const { return data_.use_count(); }
  /* kTVMFFINone for a null reference. */
  int32_t type_index() const { return data_ ? data_->type_index() : static_cast<int32_t>(kTVMFFINone); }
  std::string GetTypeKey() const { return data_ ? data_->GetTypeKey() : std::string("None"); }
  /* The object as a T, or nullptr when it is null or not a T. */
  template <typename T>
  const T* as() const {
    return data_ && data_->IsInstance<T>() ? static_cast<const T*>(data_.get()) : nullptr;
  }
  const ObjectPtr<Object>& object_ptr() const { return data_; }

  friend bool operator==(const ObjectRef& a, const ObjectRef& b) { return a.same_as(b); }
  friend bool operator!=(const ObjectRef& a, const ObjectRef& b) { return !a.same_as(b); }

 protected:
  ObjectPtr<Object> data_;
};

/* What a typed reference class declares:
 *   class Point : public ObjectRef {
 *    public:
 *     TETHER_DEFINE_OBJECT_REF_METHODS(Point, ObjectRef, PointObj);
 *   };
 * get()/operator-> give the const object; get_mutable() the object itself
 * (for code that knows it holds the only reference, or whose fields are
 * meant to be shared and mutated). */
#define TETHER_DEFINE_OBJECT_REF_METHODS(TypeName, ParentType, ObjectName)                       \
  using ContainerType = ObjectName;                                                            \
  TypeName() = default;                                                                        \
  explicit TypeName(::tether::ObjectPtr<ObjectName> n)                                         \
      : ParentType(::tether::detail::UnsafeInit{}, ::tether::ObjectPtr<::tether::Object>(std::move(n))) {} \
  TypeName(::tether::detail::UnsafeInit tag, ::tether::ObjectPtr<::tether::Object> n)          \
      : ParentType(tag, std::move(n)) {}                                                       \
  const ObjectName* get() const { return static_cast<const ObjectName*>(data_.get()); }        \
  const ObjectName* operator->() const { return get(); }                                       \
  ObjectName* get_mutable() const { return static_cast<ObjectName*>(data_.get()); }

/* What an object class declares: its type key, its parent, whether it may
 * have subtypes. The run-time index is registered on first use, by key, so
 * every library in the process that declares the key gets the same index. */
#define TETHER_DECLARE_OBJECT_INFO(TypeKey, TypeName, ParentType) \
  TETHER_DECLARE_OBJECT_INFO_IMPL(TypeKey, ParentType, false)
#define TETHER_DECLARE_OBJECT_INFO_FINAL(TypeKey, TypeName, ParentType) \
  TETHER_DECLARE_OBJECT_INFO_IMPL(TypeKey, ParentType, true)
#define TETHER_DECLARE_OBJECT_INFO_IMPL(TypeKey, ParentType, Final)                          \
  [[maybe_unused]] static constexpr const char* _type_key = TypeKey;                                       \
  [[maybe_unused]] static constexpr bool _type_final = Final;                                              \
  using _type_parent = ParentType;                                                          \
  static int32_t RuntimeTypeIndex() {                                                       \
    static const int32_t index =                                                            \
        ::tether::detail::RegisterObjectType(TypeKey, ParentType::RuntimeTypeIndex(), Final); \
    return index;                                                                           \
  }

/* For the core's own types with static indices (ffi.String, ffi.Array, ...). */
#define TETHER_DECLARE_STATIC_OBJECT_INFO(TypeKey, TypeIndex, Final) \
  [[maybe_unused]] static constexpr const char* _type_key = TypeKey;               \
  [[maybe_unused]] static constexpr bool _type_final = Final;                      \
  using _type_parent = ::tether::Object;                            \
  static int32_t RuntimeTypeIndex() { return TypeIndex; }

namespace detail {

inline int32_t TypeDepthOf(int32_t type_index) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  return info == nullptr ? -1 : info->type_depth;
}

inline std::string TypeKeyOf(int32_t type_index) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  if (info == nullptr) return "<unknown type " + std::to_string(type_index) + ">";
  return std::string(info->type_key.data, info->type_key.size);
}

}  // namespace detail
}  // namespace tether

// Registering a type can fail with an Error.
#include <tether/error.h>

#endif  // TETHER_OBJECT_H_
