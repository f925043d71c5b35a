"""Mutants of a solution cell: one small change each, the kind of slip a student makes in numpy code.

:func:`mutants` parses a cell, and for every place inside its ``### BEGIN SOLUTION`` region
(the code the student writes; the whole cell when it has none) applies each operator below,
one change per mutant.  A mutant is named by the cell line it changes and the smallest
expression around the change, before and after, so a list of survivors reads like a diff::

    line 19: np.max(x, axis=axis, keepdims=True) -> np.max(x, axis=axis)

The operators (each a function of one node, yielding what replaces it):

- arithmetic: ``+ <-> -``, ``* <-> /``, ``@ -> *``, ``** -> *``; a term, divisor or factor dropped
  (``x - m -> x``, ``s / d -> s``, either side of ``+`` and ``*``); the operands of ``-``, ``/``, ``@`` swapped;
- comparison: ``< <-> <=``, ``> <-> >=``, ``<`` and ``>`` reversed, ``== <-> !=``, ``is <-> is not``;
- constants: ``0 <-> 1``, ``n -> n + 1``, ``-n -> -(n + 1)``, ``-1 -> 0``, ``True <-> False``;
- keywords: ``axis``, ``keepdims``, ``dtype`` or ``where`` left out; ``axis=name -> axis=-1``;
- functions: ``max <-> min``, ``maximum <-> minimum``, ``argmax <-> argmin``, ``sum <-> mean``,
  ``isneginf``/``isposinf -> isinf`` (as ``np.f(x)`` or ``x.f()``);
- forgotten calls: ``np.sqrt(a)``, ``np.swapaxes(a, ...)``, ``np.transpose(a)``,
  ``np.moveaxis(a, ...)`` (and their method forms) and ``a.T`` become ``a``;
- arguments: the first two swapped (not for symmetric functions, nor when one is a literal);
  ``np.where``'s branches swapped;
  in an index, ``None`` swapped with a neighbouring ``:`` (the transposed outer product);
- unary: ``-a``, ``not a``, ``~a`` become ``a``;
- statements: an assignment that rebinds a name or writes into an array, an augmented
  assignment, a call statement or an ``if`` without ``else`` deleted (deleting a first
  binding would only give a NameError).

A mutant's code is the mutated syntax tree, compiled with the cell's line numbers.  (mutmut and
cosmic-ray mutate files on disk and run a test command; here the code is a notebook cell and
the test one call, so a small mutator of our own fits better.)
"""
from __future__ import annotations

import ast
import copy
import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterator

SOLUTION_REGION = re.compile(r"### BEGIN SOLUTION(.*?)### END SOLUTION", re.S)
DELETED = object()  # what an operator yields to delete a statement


@dataclass(frozen=True)
class Mutant:
    """One change to a cell: where (``line`` of the cell), the expression ``before`` and ``after``, the new tree."""
    line: int
    before: str
    after: str
    tree: ast.Module = field(compare=False, repr=False)

    @property
    def description(self) -> str:
        return f"line {self.line}: {self.before} -> {self.after}"

    @property
    def source(self) -> str:
        return ast.unparse(self.tree)

    def define(self, namespace: dict) -> None:
        """Run the mutated cell in ``namespace`` (its functions are then defined there)."""
        exec(compile(self.tree, "<mutant>", "exec"), namespace)


# --- the operators ---------------------------------------------------------------------------------

ARITHMETIC = {ast.Add: [ast.Sub], ast.Sub: [ast.Add], ast.Mult: [ast.Div], ast.Div: [ast.Mult],
              ast.MatMult: [ast.Mult], ast.Pow: [ast.Mult]}
COMPARISONS = {ast.Lt: [ast.LtE, ast.Gt], ast.LtE: [ast.Lt, ast.GtE], ast.Gt: [ast.GtE, ast.Lt],
               ast.GtE: [ast.Gt, ast.LtE], ast.Eq: [ast.NotEq], ast.NotEq: [ast.Eq], ast.Is: [ast.IsNot],
               ast.IsNot: [ast.Is]}
FUNCTIONS = {"max": ["min"], "min": ["max"], "amax": ["amin"], "amin": ["amax"], "maximum": ["minimum"],
             "minimum": ["maximum"], "argmax": ["argmin"], "argmin": ["argmax"], "sum": ["mean"], "mean": ["sum"],
             "isneginf": ["isinf"], "isposinf": ["isinf"]}
FORGETTABLE_CALLS = {"sqrt", "swapaxes", "transpose", "moveaxis"}  # f(a, ...) -> a
FORGETTABLE_ATTRIBUTES = {"T", "mT"}  # a.T -> a
REMOVABLE_KEYWORDS = {"axis", "keepdims", "dtype", "where"}
SYMMETRIC_CALLS = {"maximum", "minimum", "add", "multiply", "broadcast_shapes", "broadcast_arrays", "logical_and",
                   "logical_or", "swapaxes", "where", "isclose", "allclose", "array_equal", "result_type",
                   "promote_types"}
UNARY = (ast.USub, ast.Not, ast.Invert)


def _name(call: ast.Call) -> str | None:
    """``np.sum(...)`` and ``x.sum(...)`` -> ``"sum"``; ``f(...)`` -> ``"f"``."""
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return call.func.id if isinstance(call.func, ast.Name) else None


def arithmetic(node, parent) -> Iterator:
    if not isinstance(node, ast.BinOp):
        return
    for op in ARITHMETIC.get(type(node.op), []):
        yield ast.BinOp(node.left, op(), node.right)
    if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        yield node.left  # x - m -> x, s / d -> s
    if isinstance(node.op, (ast.Add, ast.Mult)):
        yield node.right
    if isinstance(node.op, (ast.Sub, ast.Div, ast.MatMult)):
        yield ast.BinOp(node.right, node.op, node.left)


def comparison(node, parent) -> Iterator:
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        for op in COMPARISONS.get(type(node.ops[0]), []):
            yield ast.Compare(node.left, [op()], node.comparators)


def _number(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def constant(node, parent) -> Iterator:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _number(node.operand):
        value = node.operand.value
        yield ast.UnaryOp(ast.USub(), ast.Constant(value + 1))  # -1 -> -2: the axis before
        if value == 1:
            yield ast.Constant(0)  # -1 -> 0: the first axis instead of the last
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        yield ast.Constant(not node.value)
    elif _number(node) and not (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub)):
        yield ast.Constant({0: 1, 1: 0}.get(node.value, node.value + 1))


def keyword(node, parent) -> Iterator:
    if not isinstance(node, ast.Call):
        return
    for index, kw in enumerate(node.keywords):
        others = node.keywords[:index] + node.keywords[index + 1:]
        if kw.arg in REMOVABLE_KEYWORDS:
            yield ast.Call(node.func, node.args, others)
        if kw.arg == "axis" and not isinstance(kw.value, (ast.Constant, ast.UnaryOp)):  # axis=axis -> axis=-1
            last = ast.keyword("axis", ast.UnaryOp(ast.USub(), ast.Constant(1)))
            yield ast.Call(node.func, node.args, [*others[:index], last, *others[index:]])


def function(node, parent) -> Iterator:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        for other in FUNCTIONS.get(node.func.attr, []):
            yield ast.Call(ast.Attribute(node.func.value, other, ast.Load()), node.args, node.keywords)


def forgotten(node, parent) -> Iterator:
    if isinstance(node, ast.Call) and _name(node) in FORGETTABLE_CALLS:
        method = isinstance(node.func, ast.Attribute) and not _module_like(node.func.value)
        if method:
            yield node.func.value
        elif node.args:
            yield node.args[0]
    if isinstance(node, ast.Attribute) and node.attr in FORGETTABLE_ATTRIBUTES and isinstance(node.ctx, ast.Load):
        yield node.value


def _module_like(node) -> bool:
    """``np``, ``numpy``, ``np.linalg``: the receiver of a function, not an array with a method."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in ("np", "numpy", "math", "sdpa_lib")


def _literal(node) -> bool:
    """A number, string, tuple or list written out: swapping it with an array only makes a TypeError."""
    negative = isinstance(node, ast.UnaryOp) and _number(node.operand)
    return negative or isinstance(node, (ast.Constant, ast.Tuple, ast.List))


def arguments(node, parent) -> Iterator:
    if isinstance(node, ast.Call) and not any(isinstance(a, ast.Starred) for a in node.args):
        if _name(node) == "where" and len(node.args) == 3:
            yield ast.Call(node.func, [node.args[0], node.args[2], node.args[1]], node.keywords)
        elif len(node.args) >= 2 and _name(node) not in SYMMETRIC_CALLS and not any(map(_literal, node.args[:2])):
            yield ast.Call(node.func, [node.args[1], node.args[0], *node.args[2:]], node.keywords)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
        items = node.slice.elts
        for i in range(len(items) - 1):
            pair = items[i], items[i + 1]
            new_axis = any(isinstance(a, ast.Constant) and a.value is None for a in pair)
            if new_axis and any(isinstance(a, ast.Slice) for a in pair):
                swapped = [*items[:i], items[i + 1], items[i], *items[i + 2:]]
                yield ast.Subscript(node.value, ast.Tuple(swapped, ast.Load()), node.ctx)


def unary(node, parent) -> Iterator:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, UNARY) and not _number(node.operand):
        yield node.operand


def statement(node, bound: frozenset[str]) -> Iterator:
    """Delete a statement whose absence still runs: a rebinding (of a name in ``bound``), an in-place write,
    a call, an ``if`` without ``else``."""
    if isinstance(node, ast.Assign):
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        writes = all(isinstance(t, (ast.Subscript, ast.Attribute, ast.Name)) for t in node.targets)
        if writes and all(name in bound for name in names):
            yield DELETED
    elif isinstance(node, ast.AugAssign) or (isinstance(node, ast.If) and not node.orelse):
        yield DELETED
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        yield DELETED


OPERATORS: tuple[Callable, ...] = (arithmetic, comparison, constant, keyword, function, forgotten, arguments, unary)


# --- applying them ---------------------------------------------------------------------------------

def solution_lines(source: str) -> set[int]:
    """The cell's lines (from 1) inside its solution regions; every line when it has none."""
    regions = list(SOLUTION_REGION.finditer(source))
    if not regions:
        return set(range(1, source.count("\n") + 2))
    return {line for region in regions
            for line in range(source.count("\n", 0, region.start()) + 1, source.count("\n", 0, region.end()) + 2)}


def _children(node) -> Iterator[tuple[tuple, ast.AST]]:
    """``((field, index), child)`` for each child node (index None for a single child)."""
    for name, value in ast.iter_fields(node):
        if isinstance(value, list):
            yield from (((name, i), item) for i, item in enumerate(value) if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            yield (name, None), value


def _at(tree, path):
    for name, index in path:
        tree = getattr(tree, name) if index is None else getattr(tree, name)[index]
    return tree


def _replace(tree, path, new) -> None:
    *up, (name, index) = path
    holder = _at(tree, up)
    if new is DELETED:
        del getattr(holder, name)[index]
        if not getattr(holder, name):
            getattr(holder, name).append(ast.Pass())
    elif index is None:
        setattr(holder, name, new)
    else:
        getattr(holder, name)[index] = new


def _sites(tree) -> Iterator[tuple[tuple, ast.AST, ast.AST, set[str]]]:
    """``(path, node, parent, names bound before it in its function)`` for every node, in source order."""
    def visit(node, path, parent, bound):
        yield path, node, parent, bound
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            bound = bound | {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        names = set(bound)
        for step, child in _children(node):
            yield from visit(child, path + (step,), node, frozenset(names))
            if isinstance(child, ast.stmt):  # later statements see what this one bound
                names |= {n.id for n in ast.walk(child) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    yield from visit(tree, (), None, frozenset())


SHOWN = (ast.Call, ast.Subscript, ast.BinOp, ast.Compare, ast.BoolOp)  # the expressions a change is shown in
SIMPLE = (ast.Assign, ast.AugAssign, ast.Expr, ast.Return)  # statements shown whole (one line)


def _context(path: tuple, tree) -> tuple:
    """The path of what shows a change at ``path``: the nearest call, index, operation or comparison around it,
    else its simple statement (``return x.T``), else the expression in its compound statement's header."""
    for end in range(len(path), -1, -1):
        node = _at(tree, path[:end])
        if isinstance(node, SHOWN) or isinstance(node, SIMPLE):
            return path[:end]
        if isinstance(node, ast.stmt):
            return path[:end + 1]
    return path


def _changed(tree, path: tuple, change) -> tuple[ast.Module, str, str]:
    """The tree with ``change`` at ``path``, and what it shows before and after (the statement for a deletion)."""
    mutated = copy.deepcopy(tree)
    _replace(mutated, path, DELETED if change is DELETED else copy.deepcopy(change))
    ast.fix_missing_locations(mutated)
    if change is DELETED:
        text = ast.unparse(_at(tree, path)).splitlines()
        return mutated, text[0] + (" ..." if len(text) > 1 else ""), "(deleted)"
    shown = _context(path, tree)
    return mutated, ast.unparse(_at(tree, shown)), ast.unparse(_at(mutated, shown))


def mutants(source: str, limit: int | None = None) -> list[Mutant]:
    """Every mutant of the cell ``source`` (each a distinct program), in source order.

    With ``limit``, at most that many: those whose descriptions hash lowest, a sample chosen
    by the descriptions alone, so that a change elsewhere in the cell leaves it mostly as it was.
    """
    tree = ast.parse(source)
    lines = solution_lines(source)
    found: list[Mutant] = []
    programs = {ast.unparse(tree)}
    shown = Counter()  # (line, before, after): seen twice when the same text changes twice on a line
    for path, node, parent, bound in _sites(tree):
        if not (hasattr(node, "lineno") and set(range(node.lineno, node.end_lineno + 1)) <= lines):
            continue
        changes = [change for operator in OPERATORS for change in operator(node, parent)]
        changes += list(statement(node, bound)) if isinstance(node, ast.stmt) else []
        for change in changes:
            mutated, before, after = _changed(tree, path, change)
            program = ast.unparse(mutated)
            if program in programs:
                continue
            programs.add(program)
            shown[node.lineno, before, after] += 1
            copies = shown[node.lineno, before, after]
            found.append(Mutant(node.lineno, before, after + (f" ({copies})" if copies > 1 else ""), mutated))
    if limit is not None and len(found) > limit:
        lowest = set(sorted((m.description for m in found), key=lambda d: hashlib.sha1(d.encode()).hexdigest())[:limit])
        found = [m for m in found if m.description in lowest]
    return found
