/*
 * tether/tether.h — the whole header-only C++ layer: objects and pointers
 * (object.h), errors (error.h), String and Bytes (string.h), Any
 * (any.h), functions (function.h), containers (containers.h), tensors
 * (tensor.h), type schemas (type_schema.h) and reflection (reflection.h). It needs only the C ABI of
 * libtether_core (c_api.h) and the C++17 standard library.
 */
#ifndef TETHER_TETHER_H_
#define TETHER_TETHER_H_

#include <tether/base.h>
#include <tether/object.h>
#include <tether/error.h>
#include <tether/string.h>
#include <tether/any.h>
#include <tether/function.h>
#include <tether/containers.h>
#include <tether/tensor.h>
#include <tether/type_schema.h>
#include <tether/reflection.h>

#endif  // TETHER_TETHER_H_
