"""Structural equality and hashing answer the same with and without their
native fast path.

The core compares and hashes most objects by native recursion over
borrowed values, handing its open levels over to the explicit-stack walk at
a hook, a Map, a List, a getter or 48 levels down. These tests build random
values that cross every such hand-over — deep chains, DAG nodes shared in
several places, free variables under def regions, hooks, cycles through
objects and Lists, Maps keyed by objects — and check three things: equality
agrees with the first-mismatch search (which always runs the walk alone);
equal values hash alike; and every answer equals the one a process started
with ``TETHER_STRUCTURAL_FAST_PATH=0`` (the walk alone) gives for the same
values.
"""

import json
import os
import random
import subprocess
import sys
import typing

import tether
from tether.dataclasses import field, py_class


@py_class("testing.fast_path.Tree", structural_eq="tree")
class Tree(tether.Object):
    v: typing.Any
    a: typing.Any = None
    b: typing.Any = None


@py_class("testing.fast_path.Dag", structural_eq="dag")
class Dag(tether.Object):
    v: typing.Any
    a: typing.Any = None


@py_class("testing.fast_path.Var", structural_eq="var")
class Var(tether.Object):
    name: str = field(structural_eq="ignore")


@py_class("testing.fast_path.Func", structural_eq="tree")
class Func(tether.Object):
    params: typing.Any = field(structural_eq="def")
    body: typing.Any = None


@py_class("testing.fast_path.Hooked", structural_eq="tree")
class Hooked(tether.Object):
    x: typing.Any = None


# The hooks compare and hash the one field through the core's callback, so
# the walk nests through them.
_index = Hooked.__tvm_ffi_type_info__.type_index
tether.core._register_type_attr(_index, "__s_equal__", lambda l, r, cmp: cmp(l.x, r.x, 0, "x"))
tether.core._register_type_attr(_index, "__s_hash__", lambda o, init, h: h(o.x, init, 0))


class Builder:
    """Builds a random value from a seed; `perturb` changes the leaf with
    that number (so two builds differ in one place, or nowhere)."""

    def __init__(self, seed: int, perturb: int = -1):
        self.rng = random.Random(seed)
        self.perturb = perturb
        self.leaves = 0
        self.shared = []  # DAG nodes to reuse
        self.vars = []  # free variables in scope
        self.path = []  # Tree nodes being built (for cycles)
        self.budget = 400  # nodes left to make (keeps the size bounded)

    def leaf(self):
        self.leaves += 1
        r = self.rng.random()
        value = self.rng.choice([0, 1, 7, -3, 2.5, "s", "a longer string", None, True, b"by"]) if r < 0.9 else 10**30
        if self.leaves == self.perturb:
            return "changed" if value != "changed" else 0
        return value

    def value(self, depth: int, spine: bool = False):
        """A value `depth` levels deep at most; on the spine (the first
        child down from the root) exactly that deep."""
        r = self.rng.random()
        self.budget -= 1
        if spine and depth > 0:
            r = 0.16 + 0.84 * r
        if depth <= 0 or r < 0.15 or self.budget <= 0:
            if self.vars and r < 0.05:
                return self.rng.choice(self.vars)
            return self.leaf()
        if r < 0.45:
            node = Tree(self.leaf())
            self.path.append(node)
            node.a = self.value(depth - 1, spine)
            if self.path and self.rng.random() < 0.03:
                node.b = self.rng.choice(self.path)  # a cycle through objects
            else:
                node.b = self.value(min(depth - 1, 4))
            self.path.pop()
            return node
        if r < 0.55:
            if self.shared and self.rng.random() < 0.5:
                return self.rng.choice(self.shared)
            node = Dag(self.leaf(), self.value(depth - 1, spine))
            self.shared.append(node)
            return node
        if r < 0.65:
            params = [Var(f"p{i}") for i in range(self.rng.randint(0, 2))]
            outer = list(self.vars)
            self.vars.extend(params)
            body = self.value(depth - 1, spine)
            self.vars = outer
            return Func(tether.Array(params), body)
        if r < 0.78:
            return tether.Array([self.value(depth - 1, spine) if i == 0 else self.value(min(depth - 1, 3)) for i in range(self.rng.randint(1, 3))])
        if r < 0.84:
            items = tether.List([self.value(depth - 1, spine) if i == 0 else self.value(min(depth - 1, 3)) for i in range(self.rng.randint(1, 2))])
            if self.rng.random() < 0.2:
                items.append(items)  # a cycle through a List
            return items
        if r < 0.92:
            keys = [self.rng.choice(["k", "q", 3])] + ([self.rng.choice(self.shared)] if self.shared else [])
            return tether.Map({k: self.value(depth - 1, spine and i == 0) for i, k in enumerate(keys)})
        return Hooked(self.value(depth - 1, spine))


def build(seed: int, perturb: int = -1):
    b = Builder(seed, perturb)
    # Some values are chains much deeper than the fast path goes natively.
    depth = b.rng.choice([3, 6, 12, 60, 130])
    v = b.value(depth, spine=b.rng.random() < 0.5)
    return v, b.leaves


def records(seeds):
    """(equal, hash lhs, hash rhs) for each case, with each flag setting;
    errors are recorded by class."""
    out = []
    for seed in seeds:
        lhs, leaves = build(seed)
        perturb = random.Random(seed).randint(-leaves // 2, leaves) if leaves else -1
        rhs, _ = build(seed, perturb)
        for map_free_vars in (False, True):
            try:
                eq = tether.structural_equal(lhs, rhs, map_free_vars)
                hashes = [tether.structural_hash(v, map_free_vars) for v in (lhs, rhs)]
                out.append([seed, map_free_vars, eq] + hashes)
            except Exception as e:  # the same error either way
                out.append([seed, map_free_vars, type(e).__name__])
    return out


SEEDS = range(240)


def test_equality_agrees_with_the_first_mismatch_search_and_hashes():
    checked = unequal = 0
    for seed in SEEDS:
        lhs, leaves = build(seed)
        perturb = random.Random(seed).randint(-leaves // 2, leaves) if leaves else -1
        rhs, _ = build(seed, perturb)
        for mfv in (False, True):
            eq = tether.structural_equal(lhs, rhs, mfv)
            assert eq == (tether.get_first_structural_mismatch(lhs, rhs, mfv) is None), (seed, mfv)
            if eq:
                assert tether.structural_hash(lhs, mfv) == tether.structural_hash(rhs, mfv), (seed, mfv)
            unequal += not eq
            checked += 1
    # The generator makes both kinds of pairs in numbers.
    assert unequal > checked // 5 and checked - unequal > checked // 5


def test_the_walk_alone_gives_the_same_answers():
    here = records(SEEDS)
    env = dict(os.environ, TETHER_STRUCTURAL_FAST_PATH="0")
    r = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, check=True)
    assert json.loads(r.stdout) == json.loads(json.dumps(here))


def test_chains_deeper_than_the_native_levels_compare_and_hash_by_content():
    def chain(n, last):
        node = Tree(last)
        for i in range(n):
            node = Tree(i, node, tether.Map({"k": i}) if i % 37 == 0 else None)
        return node

    for n in (47, 48, 49, 97, 1000):
        a, b, c = chain(n, 1), chain(n, 1), chain(n, 2)
        assert tether.structural_equal(a, b) and not tether.structural_equal(a, c)
        assert tether.structural_hash(a) == tether.structural_hash(b) != tether.structural_hash(c)
        lhs, _ = tether.get_first_structural_mismatch(a, c)
        assert str(lhs).endswith(".a.v") and str(lhs).count(".a") == n


if __name__ == "__main__":
    print(json.dumps(records(SEEDS)))
