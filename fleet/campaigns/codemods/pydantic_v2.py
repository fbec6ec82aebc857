"""``MigratePydanticV2Command``: the Pydantic v1 model API -> the Pydantic v2 API.

- ``@validator(f, pre=True)`` -> ``@field_validator(f, mode="before")`` + ``@classmethod``
  (``each_item``/``always`` have no direct v2 spelling: left for an agent, with a warning);
- ``@root_validator(pre=True)`` -> ``@model_validator(mode="before")`` + ``@classmethod``; a post
  ``@root_validator`` whose body only reads ``values`` and returns it becomes
  ``@model_validator(mode="after")`` on ``(self)`` with ``values = dict(self)`` (others are left
  for an agent, with a warning);
- ``m.dict()``/``m.json()``/``M.parse_obj(x)``/``M.parse_raw(s)``/``M.from_orm(o)`` ->
  ``model_dump``/``model_dump_json``/``model_validate``/``model_validate_json``/``model_validate``
  where the receiver is known to
  be a model (a model class, ``self``/``cls`` in one, a parameter annotated with one, or a name
  assigned from one); ``any_receiver=True`` rewrites every such call with no positional args,
  ``any_receiver="model-files"`` only in files that use a model class; ``json_output="v1"`` (the
  default) keeps v1's JSON text: ``json.dumps(m.model_dump(mode="json", ...), ...)``
  (``v1_json_call``), ``"compact"`` renames to ``model_dump_json`` (v2's compact text) except
  where the ``.json()`` passes ``json.dumps`` keywords ``model_dump_json`` lacks;
- ``class Config`` -> ``model_config = ConfigDict(...)`` (keys renamed to v2), and the names
  imported from a v1 module (``v1_modules``) are imported from ``pydantic`` once the file changed;
- fields (``const=``, ``regex=`` ...), ``pydantic.schema.schema``, ``parse_obj_as``, the other
  model methods and attributes, and moved modules: ``_pydantic_api.PydanticApiRewrites``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst
import libcst.matchers as m
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from fleet.campaigns.codemods._pydantic_api import PydanticApiRewrites
from fleet.campaigns.codemods._pydantic_fields import CONFIG_RENAMES
from fleet.campaigns.codemods._pydantic_shapes import takes_dumps_keywords, v1_json_call
from fleet.errors import ConfigError

__all__ = ["CONFIG_RENAMES", "MigratePydanticV2Command"]

_METHODS = {
    "dict": "model_dump",
    "json": "model_dump_json",
    "parse_obj": "model_validate",
    "parse_raw": "model_validate_json",
    "from_orm": "model_validate",
}
_CLASS_METHODS = {"parse_obj", "parse_raw", "from_orm"}


def _kw(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword and a.keyword.value == name), None)


def _is_true(arg: cst.Arg | None) -> bool:
    return arg is not None and m.matches(arg.value, m.Name("True"))


def _mode(value: str) -> cst.Arg:
    return cst.Arg(
        cst.SimpleString(f'"{value}"'),
        keyword=cst.Name("mode"),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )


class MigratePydanticV2Command(PydanticApiRewrites):
    DESCRIPTION = "Migrate Pydantic v1 models, fields, functions and imports to the v2 API."
    EDITS_IMPORTS = True

    def __init__(
        self,
        context: CodemodContext,
        v1_modules: Sequence[str] = ("pydantic", "pydantic.v1"),
        models: Sequence[str] = (),
        any_receiver: bool | str = False,
        spans: Iterable[Sequence[int]] | None = None,
        json_output: str = "v1",
    ) -> None:
        super().__init__(context, spans)
        if json_output not in {"compact", "v1"}:
            raise ConfigError(f"pydantic-v2: json_output: {json_output!r} is not 'compact' or 'v1'")
        self.json_output = json_output
        self.v1_modules = tuple(dict.fromkeys(("pydantic", "pydantic.v1", *v1_modules)))
        self.known_models = set(models)
        self.any_receiver = any_receiver
        self.model_stack: list[bool] = []
        self.left_behind = False
        self.uses_models = False
        self.class_stack = []
        self.wrappers = [0, 0]
        self.typed: list[set[str]] = []
        self.field_nodes: set[int] = set()

    # -- which classes are models ----------------------------------------------------------------

    def _is_model_ref(self, node: cst.CSTNode) -> bool:
        names = self.qualified_names(node)
        if names & (self.known_models | set(self._names("BaseModel"))
                    | {"pydantic.generics.GenericModel"}):
            return True
        # a model re-exported by its package (``from . import Schema`` in a package whose
        # ``__init__`` imports ``.schema.Schema``): the same class name in the same top package
        short = {(n.split(".", 1)[0], n.rsplit(".", 1)[-1]) for n in names if "." in n}
        return bool(short & {(k.split(".", 1)[0], k.rsplit(".", 1)[-1])
                             for k in self.known_models if "." in k})

    def visit_Module(self, node: cst.Module) -> None:
        self.uses_models = any(
            self._is_model_ref(name) for name in m.findall(node, m.Name() | m.Attribute())
        )

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        is_model = any(self._is_model_ref(base.value) for base in node.bases)
        if is_model:
            self.known_models |= self.qualified_names(node.name)
            local = (self.context.full_module_name or "") + "." + node.name.value
            self.known_models.add(local.lstrip("."))
            self._mark_fields(node)
        self.model_stack.append(is_model)
        self.class_stack.append(node)

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef:
        is_model = self.model_stack.pop()
        self.class_stack.pop()
        updated_node = self._generic_bases(original_node, updated_node)
        if not is_model or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        body = list(updated_node.body.body)
        for index, stmt in enumerate(body):
            if isinstance(stmt, cst.ClassDef) and stmt.name.value == "Config":
                if not self.in_scope(original_node.body.body[index]):
                    self.left_behind = True
                    continue
                replacement = self._config(stmt)
                if replacement is not None:
                    body[index] = replacement
                    self.changes += 1
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))

    def _config(self, config: cst.ClassDef) -> cst.SimpleStatementLine | None:
        args: list[cst.Arg] = []
        for stmt in config.body.body:
            if m.matches(stmt, m.SimpleStatementLine([m.Pass() | m.Expr(m.SimpleString())])):
                continue
            if not m.matches(stmt, m.SimpleStatementLine([m.Assign([m.AssignTarget(m.Name())])])):
                self.left_behind = True
                self.warn("class Config has more than plain assignments; left as is")
                return None
            assert isinstance(stmt, cst.SimpleStatementLine)
            assign = stmt.body[0]
            assert isinstance(assign, cst.Assign)
            target = assign.targets[0].target
            assert isinstance(target, cst.Name)
            key, value = CONFIG_RENAMES.get(target.value, target.value), assign.value
            removed = self._removed_config(target.value, value)
            if removed is not None:
                if not removed:
                    return None
                continue
            if target.value == "allow_mutation":
                if m.matches(value, m.Name("True")):
                    continue
                value = cst.Name("True")
            if m.matches(value, m.Attribute(m.Name("Extra"), m.Name())):
                assert isinstance(value, cst.Attribute)
                value = cst.SimpleString(f'"{value.attr.value}"')
                for module in self.v1_modules:
                    RemoveImportsVisitor.remove_unused_import(self.context, module, "Extra")
            args.append(cst.Arg(value, keyword=cst.Name(key), equal=_mode("x").equal))
        AddImportsVisitor.add_needed_import(self.context, "pydantic", "ConfigDict")
        for base in config.bases:  # ``class Config(BaseConfig)``: the base's import may go too
            if isinstance(base.value, cst.Name):
                for module in self.v1_modules:
                    RemoveImportsVisitor.remove_unused_import(self.context, module,
                                                              base.value.value)
        call = cst.Call(cst.Name("ConfigDict"), args=[
            a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            if i < len(args) - 1 else a for i, a in enumerate(args)
        ])
        assign = cst.Assign([cst.AssignTarget(cst.Name("model_config"))], call)
        return cst.SimpleStatementLine([assign], leading_lines=config.leading_lines)

    # -- validators ------------------------------------------------------------------------------

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        self.typed.pop()
        if not self.in_scope(original_node):
            v1 = set(self._names("validator")) | set(self._names("root_validator"))
            for deco in original_node.decorators:
                expr = deco.decorator
                if self.qualified_names(expr.func if isinstance(expr, cst.Call) else expr) & v1:
                    self.left_behind = True
            return updated_node
        decorators = list(updated_node.decorators)
        changed, after = False, False
        pairs = zip(original_node.decorators, decorators, strict=True)
        for index, (orig, deco) in enumerate(pairs):
            new = self._decorator(orig, deco, updated_node)
            if new is not None:
                decorators[index] = new
                changed = True
                after = after or m.matches(new.decorator, m.Call(args=[m.Arg(m.SimpleString(
                    '"after"'))]))
        if not changed:
            return updated_node
        self.changes += 1
        if after:
            converted = _to_after(updated_node)
            assert converted is not None  # checked by _decorator
            return converted.with_changes(decorators=decorators)
        if not any(m.matches(d.decorator, m.Name("classmethod")) for d in decorators):
            last = next(
                i for i, d in enumerate(decorators)
                if m.matches(d.decorator, m.Call(m.Name("field_validator") | m.Name(
                    "model_validator")))
            )
            decorators.insert(last + 1, cst.Decorator(cst.Name("classmethod")))
        return updated_node.with_changes(decorators=decorators)

    def _decorator(
        self, orig: cst.Decorator, deco: cst.Decorator, func_def: cst.FunctionDef
    ) -> cst.Decorator | None:
        expr = deco.decorator
        func = expr.func if isinstance(expr, cst.Call) else expr
        call = expr if isinstance(expr, cst.Call) else None
        orig_expr = orig.decorator
        names = self.qualified_names(
            orig_expr.func if isinstance(orig_expr, cst.Call) else orig_expr
        )
        if names & set(self._names("validator")) and call is not None:
            if _kw(call, "each_item") or (_kw(call, "always") and not self._required(call)):
                self.left_behind = True
                self.warn("@validator(each_item=/always=) has no direct v2 form; left as is")
                return None
            args = [a for a in call.args if a.keyword is None or a.keyword.value == "check_fields"]
            if _is_true(_kw(call, "pre")):
                args.append(_mode("before"))
            args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
            args = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                    if i < len(args) - 1 else a for i, a in enumerate(args)]
            self._swap_import(func, "validator", "field_validator")
            return deco.with_changes(decorator=call.with_changes(
                func=cst.Name("field_validator"), args=args))
        if names & set(self._names("root_validator")):
            pre = call is not None and _is_true(_kw(call, "pre"))
            if not pre and _to_after(func_def) is None:
                self.left_behind = True
                self.warn("a post @root_validator that rebinds or mutates values; left as is")
                return None
            self._swap_import(func, "root_validator", "model_validator")
            mode = _mode("before" if pre else "after")
            return deco.with_changes(decorator=cst.Call(cst.Name("model_validator"), args=[mode]))
        return None

    def _swap_import(self, func: cst.BaseExpression, old: str, new: str) -> None:
        AddImportsVisitor.add_needed_import(self.context, "pydantic", new)
        for module in self.v1_modules:
            RemoveImportsVisitor.remove_unused_import(self.context, module, old)

    # -- model methods ---------------------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._custom_type(node)
        typed: set[str] = set()
        in_model = bool(self.model_stack) and self.model_stack[-1]
        for index, param in enumerate(node.params.params):
            receiver = index == 0 and in_model and param.name.value in {"self", "cls"}
            annotation = param.annotation
            if receiver or (annotation is not None and self._is_model_ref(annotation.annotation)):
                typed.add(param.name.value)
        for assign in m.findall(node.body, m.Assign([m.AssignTarget(m.Name())], m.Call())):
            assert isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call)
            func = assign.value.func
            ctor = func.value if isinstance(func, cst.Attribute) else func
            if self._is_model_ref(ctor):
                target = assign.targets[0].target
                assert isinstance(target, cst.Name)
                typed.add(target.value)
        self.typed.append(typed)

    def _receiver_is_model(self, receiver: cst.BaseExpression, method: str) -> bool:
        if method in _CLASS_METHODS and self._is_model_ref(receiver):
            return True
        if isinstance(receiver, cst.Name) and self.typed and receiver.value in self.typed[-1]:
            return True
        return isinstance(receiver, cst.Call) and self._is_model_ref(
            receiver.func.value if isinstance(receiver.func, cst.Attribute) else receiver.func
        )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        v2 = self._api_call(original_node, updated_node)  # fields, functions, other methods
        if v2 is not None:
            return v2
        func = updated_node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in _METHODS:
            return updated_node
        method = func.attr.value
        positional = [a for a in original_node.args if a.keyword is None]
        assert isinstance(original_node.func, cst.Attribute)
        known = self._receiver_is_model(original_node.func.value, method)
        anyone = self.any_receiver is True or (
            self.any_receiver == "model-files" and self.uses_models
        )
        if not known and not (anyone and not positional):
            return updated_node
        if not self.in_scope(original_node):
            return updated_node
        self.changes += 1
        v1_json = method == "json" and (
            self.json_output == "v1" or takes_dumps_keywords(updated_node))
        dumps = v1_json_call(updated_node) if v1_json else None
        if dumps is not None:
            AddImportsVisitor.add_needed_import(self.context, "json")
            return dumps
        if v1_json:
            self.warn(".json() with positional, ** , encoder= or models_as_dict= arguments has "
                      "no json.dumps(model_dump()) form; renamed to model_dump_json")
        return updated_node.with_changes(func=func.with_changes(attr=cst.Name(_METHODS[method])))

    # -- imports: once the file uses the v2 API, the v1 names come from pydantic -------------

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        self._api_module_end()
        updated_node = self._rebuild_imported(original_node, updated_node)
        legacy = [mod for mod in self.v1_modules if mod != "pydantic"]
        in_scope = any(
            self.in_scope(imp) and (cst.helpers.get_full_name_for_node(imp.module) or "") in legacy
            for imp in m.findall(original_node, m.ImportFrom(module=m.DoNotCare()))
            if isinstance(imp, cst.ImportFrom) and imp.module is not None and not imp.relative
        )
        if self.left_behind or not (self.changes or in_scope):
            return updated_node
        repointed = updated_node.visit(_RepointImports(legacy))
        assert isinstance(repointed, cst.Module)
        return repointed


class _RepointImports(cst.CSTTransformer):
    def __init__(self, modules: Sequence[str]) -> None:
        self.modules = set(modules)

    def leave_ImportFrom(
        self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom
    ) -> cst.ImportFrom:
        if updated_node.module is None or updated_node.relative:
            return updated_node
        name = cst.helpers.get_full_name_for_node(updated_node.module)
        if name in self.modules:
            return updated_node.with_changes(module=cst.Name("pydantic"))
        return updated_node


def _to_after(func: cst.FunctionDef) -> cst.FunctionDef | None:
    """``def check(cls, values): ...; return values`` -> ``def check(self): values = dict(self);
    ...; return self``, or ``None`` when the body rebinds or mutates ``values`` or returns anything
    else (then the (cls, values) -> (self) move needs an agent)."""
    params = func.params.params
    if len(params) != 2 or func.params.star_arg is not cst.MaybeSentinel.DEFAULT or not isinstance(
        func.body, cst.IndentedBlock
    ):
        return None
    values = params[1].name.value
    name = m.Name(values)
    writes = m.Assign(targets=[m.ZeroOrMore(), m.AssignTarget(name | m.Subscript(name)),
                               m.ZeroOrMore()]) | m.AugAssign(target=name | m.Subscript(name))
    if m.findall(func.body, writes | m.Del()):
        return None
    nested = m.findall(func.body, m.FunctionDef() | m.Lambda() | m.ClassDef())
    returns = m.findall(func.body, m.Return())
    if nested or not returns or not all(m.matches(r, m.Return(name)) for r in returns):
        return None
    body = func.body.visit(_ReturnSelf())
    assert isinstance(body, cst.IndentedBlock)
    first = cst.parse_statement(f"{values} = dict(self)\n")
    statements = list(body.body)
    start = 1 if statements and m.matches(
        statements[0], m.SimpleStatementLine([m.Expr(m.SimpleString())])) else 0
    statements.insert(start, first)
    self_param = params[0].with_changes(name=cst.Name("self"), comma=cst.MaybeSentinel.DEFAULT)
    return func.with_changes(
        params=func.params.with_changes(params=[self_param]),
        body=body.with_changes(body=statements),
        returns=None,
    )


class _ReturnSelf(cst.CSTTransformer):
    def leave_Return(self, original_node: cst.Return, updated_node: cst.Return) -> cst.Return:
        return updated_node.with_changes(value=cst.Name("self"))
