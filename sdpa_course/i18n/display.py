"""Which string literals of a notebook's code a learner reads in its output: those a translation replaces.

A literal is *shown* when it is:

* an argument of a call that shows text (``print``, ``set_title``, ``text``, a grade cell's
  ``GradingError``, ... :data:`SHOWING_CALLS`) or the value of a keyword that does (``label=``,
  ``title=``, ``hint=``, ... :data:`SHOWING_KEYWORDS`);
* inside such an expression, reached through a list or tuple, a conditional expression
  (``a if c else b``), a concatenation (``"query \\ key " + ...``), a %-format (its format string) or
  a list comprehension's element (``[f"doc {j}" for j in order]``);
* bound to a name that its cell only shows: ``label = "scaled" if s else "unscaled"`` then
  ``ax.plot(x, y, label=label)``, or ``for name, mask in [("no mask", None), ...]`` (also through
  ``zip``, ``enumerate`` and a dict's ``.items()``) then ``ax.set_title(name)``.  A name is shown where
  it stands in a showing position as above, or as a field of a shown f-string (``print(f"-> {reading}")``);
  a list or dict written out and only iterated over (``table = [(...), ...]`` then ``for name, ... in
  table``) gives its elements to the loop's names.
  A name its cell uses in any other way (compares it, passes it to a computation, looks something
  up with it), or that another cell uses so without binding it again, is not only shown: its
  literals stay as they are, since translating them would change what the code does.

An f-string is one literal, its constant fields included (``f"{'loop (ms)':>10}"``, a table header).
"""
from __future__ import annotations

import ast
from typing import Iterable

SHOWING_CALLS = {"print", "set_title", "set_xlabel", "set_ylabel", "suptitle", "title", "xlabel", "ylabel",
                 "text", "annotate", "set_xticklabels", "set_yticklabels", "bar", "barh", "Markdown",
                 # a grade cell's feedback: its failure message, the names and hints of its checks
                 "GradingError", "expect_close", "expect_shape", "expect_rows_sum_to_one"}
SHOWING_KEYWORDS = {"title", "label", "xlabel", "ylabel", "description", "labels", "hint"}
# Calls whose arguments from the second on are shown: ax.set_xticks(positions, labels).
SHOWING_AFTER_FIRST = {"set_xticks", "set_yticks", "xticks", "yticks"}


def is_string_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or isinstance(node, ast.Constant) and isinstance(node.value, str)


def _call_name(call: ast.Call) -> str | None:
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)


def _showing_positions(tree: ast.AST) -> Iterable[ast.expr]:
    """The expressions whose value a learner reads: arguments of the showing calls, values of showing keywords."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name in SHOWING_CALLS:
                yield from node.args
            elif name in SHOWING_AFTER_FIRST:
                yield from node.args[1:]
            yield from (keyword.value for keyword in node.keywords if keyword.arg in SHOWING_KEYWORDS)


def _shown_parts(expression: ast.expr, literals: list[ast.expr], names: list[ast.Name]) -> None:
    """Add to ``literals`` the string literals whose text ``expression`` shows, to ``names`` the names it shows."""
    if is_string_literal(expression):
        literals.append(expression)
        if isinstance(expression, ast.JoinedStr):  # a field's name is shown; its literals belong to the f-string
            for field in expression.values:
                if isinstance(field, ast.FormattedValue) and isinstance(field.value, ast.Name):
                    names.append(field.value)
    elif isinstance(expression, ast.Name):
        names.append(expression)
    elif isinstance(expression, (ast.List, ast.Tuple)):
        for element in expression.elts:
            _shown_parts(element, literals, names)
    elif isinstance(expression, ast.IfExp):
        _shown_parts(expression.body, literals, names)
        _shown_parts(expression.orelse, literals, names)
    elif isinstance(expression, ast.BinOp) and isinstance(expression.op, ast.Add):
        _shown_parts(expression.left, literals, names)
        _shown_parts(expression.right, literals, names)
    elif isinstance(expression, ast.BinOp) and isinstance(expression.op, ast.Mod) and is_string_literal(expression.left):
        literals.append(expression.left)
    elif isinstance(expression, ast.ListComp):
        _shown_parts(expression.elt, literals, names)


def _bindings(tree: ast.AST, containers: dict[str, ast.expr]) -> Iterable[tuple[str, ast.expr]]:
    """``(name, expression)`` for each value a name is given: ``name = value``, and ``for`` loops over values
    written out (``for a, b in [(x, y), ...]`` gives ``a`` each ``x`` and ``b`` each ``y``; also over
    ``zip(...)`` and ``enumerate(...)`` of such lists, over a dict's keys or ``.items()``, and over a name
    bound to a list, tuple or dict written out: ``containers``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            yield node.targets[0].id, node.value
        elif isinstance(node, (ast.For, ast.comprehension)):
            yield from _loop_bindings(node.target, node.iter, containers)


def _loop_bindings(target: ast.expr, iterable: ast.expr, containers: dict[str, ast.expr]):
    if isinstance(iterable, ast.Name) and iterable.id in containers:
        iterable = containers[iterable.id]
    if isinstance(iterable, ast.Dict):  # iterating a dict gives its keys
        iterable = ast.List(elts=list(iterable.keys))
    targets = target.elts if isinstance(target, ast.Tuple) else None
    if isinstance(iterable, (ast.List, ast.Tuple)):
        for item in iterable.elts:
            if isinstance(target, ast.Name):
                yield target.id, item
            elif targets and isinstance(item, ast.Tuple) and len(item.elts) == len(targets):
                for name, value in zip(targets, item.elts):  # a nested target, (label, out), unpacks its value again
                    yield from _loop_bindings(name, ast.List(elts=[value]), containers)
        return
    if not isinstance(iterable, ast.Call):
        return
    function = _call_name(iterable)
    if function == "zip" and targets and len(targets) == len(iterable.args):
        for name, column in zip(targets, iterable.args):
            yield from _loop_bindings(name, column, containers)
    elif function == "enumerate" and targets and len(targets) == 2 and iterable.args:
        yield from _loop_bindings(targets[1], iterable.args[0], containers)
    elif (function == "items" and targets and len(targets) == 2 and isinstance(iterable.func, ast.Attribute)
          and isinstance(containers.get(getattr(iterable.func.value, "id", None)), ast.Dict)):
        pairs = containers[iterable.func.value.id]
        yield from _loop_bindings(targets[0], ast.List(elts=list(pairs.keys)), containers)
        yield from _loop_bindings(targets[1], ast.List(elts=list(pairs.values)), containers)


def _iterated(tree: ast.AST) -> set[int]:
    """The names loaded only to be iterated over (``for x in table``, ``zip(books, ...)``, ``d.items()``,
    ``d.values()``): their elements reach only the loop's names, which are checked on their own."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)):
            iterable = node.iter
            if isinstance(iterable, ast.Call) and _call_name(iterable) in ("zip", "enumerate"):
                found |= {id(argument) for argument in iterable.args if isinstance(argument, ast.Name)}
            elif isinstance(iterable, ast.Name):
                found.add(id(iterable))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("items", "keys", "values") and isinstance(node.func.value, ast.Name)):
            found.add(id(node.func.value))
    return found


class Cell:
    """What one code cell shows, binds and uses otherwise."""

    def __init__(self, source: str):
        self.tree = _parse(source)
        shown: list[ast.Name] = []
        for expression in _showing_positions(self.tree):
            _shown_parts(expression, [], shown)
        neutral = {id(name) for name in shown} | _iterated(self.tree)
        self.shown = {name.id for name in shown}
        self.used_otherwise = {node.id for node in ast.walk(self.tree) if isinstance(node, ast.Name)
                               and isinstance(node.ctx, ast.Load) and id(node) not in neutral}
        self.bound = {node.id for node in ast.walk(self.tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
        self.bound |= {arg.arg for node in ast.walk(self.tree) if isinstance(node, ast.arguments)
                       for arg in (*node.posonlyargs, *node.args, *node.kwonlyargs)}
        self.containers = {node.targets[0].id: node.value for node in ast.walk(self.tree) if isinstance(node, ast.Assign)
                           and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                           and isinstance(node.value, (ast.Dict, ast.List, ast.Tuple))}


class Notebook:
    """The shown literals of each code cell of one notebook (its code cells' sources, parsed once)."""

    def __init__(self, sources: Iterable[str]):
        self.cells = {source: Cell(source) for source in sources}

    def _kept_to(self, cell: Cell, names: Iterable[str]) -> set[str]:
        """Those of ``names`` that ``cell`` uses in no other way (than showing or iterating), and that no other cell
        uses otherwise without binding them anew."""
        return {name for name in names if name not in cell.used_otherwise
                and not any(name in other.used_otherwise and name not in other.bound for other in self.cells.values())}

    def literals(self, source: str) -> list[ast.expr]:
        """The string literals of the cell ``source`` that its output shows, in source order."""
        cell = self.cells.get(source) or Cell(source)
        literals: list[ast.expr] = []
        for expression in _showing_positions(cell.tree):
            _shown_parts(expression, literals, [])
        only_shown = self._kept_to(cell, cell.shown)
        kept = self._kept_to(cell, cell.containers)
        containers = {name: value for name, value in cell.containers.items() if name in kept}
        for name, value in _bindings(cell.tree, containers):
            if name in only_shown:
                _shown_parts(value, literals, [])
        unique = {id(node): node for node in literals}.values()
        return sorted(unique, key=lambda node: (node.lineno, node.col_offset))


def _parse(source: str) -> ast.AST:
    try:
        return ast.parse(source)
    except SyntaxError:  # a cell magic or shell line: nothing to translate
        return ast.Module(body=[], type_ignores=[])
