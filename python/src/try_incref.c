/* Taking a reference to a wrapper another thread may be tearing down.
 *
 * A binding names its canonical wrapper without owning a reference, so a
 * lookup must increment the wrapper's count only if it has not reached
 * zero. On free-threaded CPython (PEP 703) the count is split into a local
 * part (owner thread) and a shared atomic part, and the owner frees an
 * object whose shared part is zero without synchronising with anyone. We
 * follow the protocol CPython uses for weak references (its internal
 * try-incref, public only from 3.14): every wrapper is marked "maybe
 * weakly referenced" when allocated, so its teardown always goes through
 * the atomic merge of the two counts, and a non-owner increments the shared
 * part with compare-and-swap only while that merge has not happened. Either
 * the increment or the merge wins; a wrapper is never revived after its
 * teardown began. Only the object.h inline helpers are used.
 *
 * With the GIL, a plain check of the count is enough; the Rust side does it
 * inline and these functions are not called.
 */
#include <Python.h>

#ifdef Py_GIL_DISABLED

void tether_enable_try_incref(PyObject *op) {
    if (_Py_IsImmortal(op)) {
        return;
    }
    Py_ssize_t shared = _Py_atomic_load_ssize_relaxed(&op->ob_ref_shared);
    while ((shared & _Py_REF_SHARED_FLAG_MASK) == 0) {
        if (_Py_atomic_compare_exchange_ssize(&op->ob_ref_shared, &shared, shared | _Py_REF_MAYBE_WEAKREF)) {
            return;
        }
    }
}

int tether_try_incref(PyObject *op) {
    uint32_t local = _Py_atomic_load_uint32_relaxed(&op->ob_ref_local);
    if (local == _Py_IMMORTAL_REFCNT_LOCAL) {
        return 1;
    }
    if (_Py_IsOwnedByCurrentThread(op)) {
        if (local == 0) {
            /* Being torn down on this very thread. */
            return 0;
        }
        _Py_atomic_store_uint32_relaxed(&op->ob_ref_local, local + 1);
        return 1;
    }
    Py_ssize_t shared = _Py_atomic_load_ssize_relaxed(&op->ob_ref_shared);
    for (;;) {
        /* Zero (never marked, so the owner may free it at any moment) or
         * merged with a zero count: the teardown has begun. */
        if (shared == 0 || shared == _Py_REF_MERGED) {
            return 0;
        }
        if (_Py_atomic_compare_exchange_ssize(&op->ob_ref_shared, &shared,
                                              shared + (1 << _Py_REF_SHARED_SHIFT))) {
            return 1;
        }
    }
}

#endif
