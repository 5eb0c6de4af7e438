/*
 * tether/tensor.h — DataType, Device, Tensor and TensorView.
 *
 * DataType and Device are DLPack's DLDataType and DLDevice as values (they
 * travel inside an Any, kTVMFFIDataType / kTVMFFIDevice); their string
 * forms are the core's (TVMFFIDataTypeFromString / ToString), so they match
 * TVM-FFI's spellings. A Tensor is an ffi.Tensor, whose layout is simple
 * (the object header, then a DLTensor), so its metadata is read inline;
 * tensors are made from DLPack managed tensors by the core. TensorView is a
 * non-owning view of a DLTensor, for kernels that only read metadata and
 * data (it accepts an ffi.Tensor or a raw DLTensor* argument).
 */
#ifndef TETHER_TENSOR_H_
#define TETHER_TENSOR_H_

#include <tether/containers.h>

#include <cstdlib>
#if defined(_WIN32)
#include <malloc.h>
#endif
#include <string>
#include <vector>

namespace tether {

/* DLPack's type codes. */
enum DataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
};

class DataType {
 public:
  DataType() : DataType(kDLOpaqueHandle, 0, 0) {}
  DataType(uint8_t code, uint8_t bits, uint16_t lanes = 1) : dtype_{code, bits, lanes} {}
  explicit DataType(TetherDLDataType d) : dtype_(d) {}
  /* From TVM-FFI's spelling ("float32", "int8x4", "bool", ...); ValueError
   * for an unknown one. */
  explicit DataType(const std::string& s) {
    TVMFFIByteArray in{s.data(), s.size()};
    detail::CheckCall(TVMFFIDataTypeFromString(&in, &dtype_));
  }
  static DataType Int(int bits, int lanes = 1) { return DataType(kDLInt, static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes)); }
  static DataType UInt(int bits, int lanes = 1) { return DataType(kDLUInt, static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes)); }
  static DataType Float(int bits, int lanes = 1) { return DataType(kDLFloat, static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes)); }
  static DataType Bool() { return DataType(kDLBool, 8, 1); }

  uint8_t code() const { return dtype_.code; }
  uint8_t bits() const { return dtype_.bits; }
  uint16_t lanes() const { return dtype_.lanes; }
  /* Bytes per element, rounded up. */
  size_t bytes() const { return (static_cast<size_t>(dtype_.bits) * dtype_.lanes + 7) / 8; }
  const TetherDLDataType& raw() const { return dtype_; }
  std::string str() const {
    TVMFFIAny out = TVMFFIAny();
    detail::CheckCall(TVMFFIDataTypeToString(&dtype_, &out));
    return Any::FromRawOwned(out).cast<std::string>();
  }
  friend bool operator==(const DataType& a, const DataType& b) {
    return a.dtype_.code == b.dtype_.code && a.dtype_.bits == b.dtype_.bits && a.dtype_.lanes == b.dtype_.lanes;
  }
  friend bool operator!=(const DataType& a, const DataType& b) { return !(a == b); }

 private:
  TetherDLDataType dtype_;
};

/* DLPack's device types used most. */
enum DeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLMetal = 8, kDLROCM = 10 };

class Device {
 public:
  Device() : device_{kDLCPU, 0} {}
  Device(int32_t type, int32_t id) : device_{type, id} {}
  explicit Device(TetherDLDevice d) : device_(d) {}
  static Device CPU(int32_t id = 0) { return Device(kDLCPU, id); }
  int32_t device_type() const { return device_.device_type; }
  int32_t device_id() const { return device_.device_id; }
  const TetherDLDevice& raw() const { return device_; }
  friend bool operator==(const Device& a, const Device& b) {
    return a.device_.device_type == b.device_.device_type && a.device_.device_id == b.device_.device_id;
  }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }

 private:
  TetherDLDevice device_;
};

template <>
struct TypeTraits<DataType> {
  static void ToAny(const DataType& d, TVMFFIAny* out) {
    *out = TVMFFIAny();
    out->type_index = kTVMFFIDataType;
    out->v_dtype = d.raw();
  }
  /* Also from a dtype string, as TVM-FFI converts. */
  static std::optional<DataType> TryCast(const TVMFFIAny& v) {
    if (v.type_index == kTVMFFIDataType) return DataType(v.v_dtype);
    if (auto s = TypeTraits<String>::TryCast(v)) {
      TetherDLDataType d;
      TVMFFIByteArray in{s->data(), s->size()};
      if (TVMFFIDataTypeFromString(&in, &d) == 0) return DataType(d);
      TVMFFIObjectHandle discarded = nullptr;  // not a dtype string: a cast failure, not an error
      TVMFFIErrorMoveFromRaised(&discarded);
      if (discarded != nullptr) TVMFFIObjectDecRef(discarded);
    }
    return std::nullopt;
  }
  static std::string TypeStr() { return "DataType"; }
};

template <>
struct TypeTraits<Device> {
  static void ToAny(const Device& d, TVMFFIAny* out) {
    *out = TVMFFIAny();
    out->type_index = kTVMFFIDevice;
    out->v_device = d.raw();
  }
  static std::optional<Device> TryCast(const TVMFFIAny& v) {
    if (v.type_index == kTVMFFIDevice) return Device(v.v_device);
    return std::nullopt;
  }
  static std::string TypeStr() { return "Device"; }
};

class TensorObj : public Object {
 public:
  TETHER_DECLARE_STATIC_OBJECT_INFO("ffi.Tensor", kTVMFFITensor, true)
  TetherDLTensor dl_tensor;
};

namespace detail {

/* Reading a DLTensor's metadata, shared by Tensor and TensorView. */
template <typename Derived>
class DLTensorAccess {
 public:
  void* data_ptr() const { return static_cast<char*>(T().data) + T().byte_offset; }
  int32_t ndim() const { return T().ndim; }
  int64_t size(int32_t i) const { return T().shape[i < 0 ? i + T().ndim : i]; }
  std::vector<int64_t> shape() const { return std::vector<int64_t>(T().shape, T().shape + T().ndim); }
  /* The strides, computed (row-major) when the tensor has none. */
  std::vector<int64_t> strides() const {
    std::vector<int64_t> s(static_cast<size_t>(T().ndim));
    int64_t step = 1;
    for (int32_t i = T().ndim - 1; i >= 0; --i) {
      s[static_cast<size_t>(i)] = T().strides != nullptr ? T().strides[i] : step;
      step *= T().shape[i];
    }
    return s;
  }
  int64_t numel() const {
    int64_t n = 1;
    for (int32_t i = 0; i < T().ndim; ++i) n *= T().shape[i];
    return n;
  }
  bool IsContiguous() const {
    if (T().strides == nullptr) return true;
    int64_t step = 1;
    for (int32_t i = T().ndim - 1; i >= 0; --i) {
      if (T().shape[i] != 1 && T().strides[i] != step) return false;
      step *= T().shape[i];
    }
    return true;
  }
  DataType dtype() const { return DataType(T().dtype); }
  Device device() const { return Device(T().device); }
  uint64_t byte_offset() const { return T().byte_offset; }

 private:
  const TetherDLTensor& T() const { return static_cast<const Derived*>(this)->dl_tensor(); }
};

}  // namespace detail

class Tensor : public ObjectRef, public detail::DLTensorAccess<Tensor> {
 public:
  TETHER_DEFINE_OBJECT_REF_METHODS(Tensor, ObjectRef, TensorObj)

  const TetherDLTensor& dl_tensor() const { return get()->dl_tensor; }

  /* Take a managed tensor (the Tensor calls its deleter once; on failure
   * the caller keeps it). */
  static Tensor FromDLPack(TetherDLManagedTensor* from, int32_t require_alignment = 0,
                           bool require_contiguous = false) {
    TVMFFIObjectHandle out = nullptr;
    detail::CheckCall(TVMFFITensorFromDLPack(from, require_alignment, require_contiguous ? 1 : 0, &out));
    return Tensor(detail::UnsafeInit{}, ObjectPtr<Object>::Adopt(static_cast<Object*>(out)));
  }
  static Tensor FromDLPackVersioned(TetherDLManagedTensorVersioned* from, int32_t require_alignment = 0,
                                    bool require_contiguous = false) {
    TVMFFIObjectHandle out = nullptr;
    detail::CheckCall(
        TVMFFITensorFromDLPackVersioned(from, require_alignment, require_contiguous ? 1 : 0, &out));
    return Tensor(detail::UnsafeInit{}, ObjectPtr<Object>::Adopt(static_cast<Object*>(out)));
  }
  /* A new compact CPU tensor (uninitialised, 64-byte aligned). */
  static Tensor EmptyCPU(const std::vector<int64_t>& shape, DataType dtype) {
    struct Owner {
      TetherDLManagedTensorVersioned managed;
      std::vector<int64_t> shape;
    };
    Owner* owner = new Owner{};
    owner->shape = shape;
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    size_t bytes = static_cast<size_t>(n) * dtype.bytes();
    size_t rounded = (bytes + 63) / 64 * 64;
    void* data = rounded == 0 ? nullptr : AlignedAlloc(rounded);
    if (rounded != 0 && data == nullptr) {
      delete owner;
      throw std::bad_alloc();
    }
    TetherDLManagedTensorVersioned& m = owner->managed;
    m.version.major = TETHER_DLPACK_MAJOR_VERSION;
    m.version.minor = TETHER_DLPACK_MINOR_VERSION;
    m.manager_ctx = owner;
    m.deleter = [](TetherDLManagedTensorVersioned* self) {
      Owner* o = static_cast<Owner*>(self->manager_ctx);
      AlignedFree(o->managed.dl_tensor.data);
      delete o;
    };
    m.flags = 0;
    m.dl_tensor.data = data;
    m.dl_tensor.device = Device::CPU().raw();
    m.dl_tensor.ndim = static_cast<int32_t>(shape.size());
    m.dl_tensor.dtype = dtype.raw();
    m.dl_tensor.shape = owner->shape.data();
    m.dl_tensor.strides = nullptr;
    m.dl_tensor.byte_offset = 0;
    try {
      return FromDLPackVersioned(&m);
    } catch (...) {
      m.deleter(&m);
      throw;
    }
  }
  /* A managed tensor holding a reference on this Tensor. */
  TetherDLManagedTensorVersioned* ToDLPackVersioned() const {
    TetherDLManagedTensorVersioned* out = nullptr;
    detail::CheckCall(TVMFFITensorToDLPackVersioned(detail::Header(get()), &out));
    return out;
  }
  TetherDLManagedTensor* ToDLPack() const {
    TetherDLManagedTensor* out = nullptr;
    detail::CheckCall(TVMFFITensorToDLPack(detail::Header(get()), &out));
    return out;
  }

 private:
  static void* AlignedAlloc(size_t bytes) {
#if defined(_WIN32)
    return _aligned_malloc(bytes, 64);
#else
    return std::aligned_alloc(64, bytes);
#endif
  }
  static void AlignedFree(void* p) {
#if defined(_WIN32)
    _aligned_free(p);
#else
    std::free(p);
#endif
  }
};

/* A non-owning view of a tensor's DLTensor: valid while the tensor lives
 * (for the duration of a call, when it is an argument). */
class TensorView : public detail::DLTensorAccess<TensorView> {
 public:
  explicit TensorView(const TetherDLTensor* t) : t_(t) {}
  TensorView(const Tensor& t) : t_(&t.dl_tensor()) {}  // NOLINT
  const TetherDLTensor& dl_tensor() const { return *t_; }

 private:
  const TetherDLTensor* t_;
};

template <>
struct TypeTraits<TensorView> {
  static void ToAny(const TensorView& t, TVMFFIAny* out) {
    *out = TVMFFIAny();
    out->type_index = kTVMFFIDLTensorPtr;
    out->v_ptr = const_cast<TetherDLTensor*>(&t.dl_tensor());
  }
  static std::optional<TensorView> TryCast(const TVMFFIAny& v) {
    if (v.type_index == kTVMFFIDLTensorPtr) return TensorView(static_cast<const TetherDLTensor*>(v.v_ptr));
    TVMFFIObject* h = detail::AnyObject(v);
    if (h != nullptr && h->type_index == kTVMFFITensor) return TensorView(TetherTensorDLTensor(h));
    return std::nullopt;
  }
  static std::string TypeStr() { return "TensorView"; }
};

}  // namespace tether

#endif  // TETHER_TENSOR_H_
