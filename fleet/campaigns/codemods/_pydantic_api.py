"""The Pydantic v1 API outside models' validators and Config: fields, functions, imports.

A mixin of :class:`MigratePydanticV2Command` (one pass, so the unit's byte spans stay valid):

- ``Field(default=v, const=True)`` (annotated or not) -> ``x: Literal[v] = Field(default=v)``;
  ``regex=`` -> ``pattern=``, ``min_items``/``max_items`` -> ``min_length``/``max_length``,
  ``allow_mutation=False`` -> ``frozen=True``;
- ``pydantic.schema.schema(models, by_alias=, ref_prefix=)`` -> the same ``{"definitions":
  ...}`` shape from ``pydantic.json_schema.models_json_schema``; ``parse_obj_as(T, v)`` ->
  ``TypeAdapter(T).validate_python(v)``; ``schema_of(T)`` -> ``TypeAdapter(T).json_schema()``;
- ``m.copy()`` / ``M.construct()`` / ``M.schema()`` on known models -> ``model_copy`` /
  ``model_construct`` / ``model_json_schema``; ``M.update_forward_refs(**ns)`` ->
  ``M.model_rebuild(_types_namespace={...})``; ``x.__fields__`` / ``x.__fields_set__`` ->
  ``model_fields`` / ``model_fields_set``;
- ``ValidationError([ErrorWrapper(e, loc=L)], M)``, reused ``validator(...)(fn)``,
  ``GenericModel`` bases, ``always=True`` on required fields: ``_pydantic_shapes``;
- imports from modules v2 moved: ``pydantic.error_wrappers.ValidationError``,
  ``pydantic.main.BaseModel`` ... -> ``pydantic``; ``pydantic.parse`` -> ``pydantic.deprecated
  .parse`` (v2 keeps it, deprecated).

What has no mechanical v2 form is left exactly as it was, with a warning that says why
(``REMOVED``): the campaign's matchers report those sites, so the unit ends ``partial`` with
them open for an agent or a human, never silently "fixed".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from fleet.campaigns.codemods._pydantic_fields import PydanticFieldShapes
from fleet.campaigns.codemods._pydantic_shapes import REMOVED, _comma_args, _kwarg

__all__ = ["REMOVED", "PydanticApiRewrites"]

_FIELD_KWARGS = {"regex": "pattern", "min_items": "min_length", "max_items": "max_length"}
#: names a module of v1 gave that v2 gives from ``pydantic`` (or another module) unchanged
_MOVED: dict[str, dict[str, str]] = {
    "pydantic.error_wrappers": {"ValidationError": "pydantic"},
    "pydantic.main": {"BaseModel": "pydantic", "create_model": "pydantic",
                      "Extra": "pydantic", "validate_model": ""},
    "pydantic.parse": {"Protocol": "pydantic.deprecated.parse",
                       "load_file": "pydantic.deprecated.parse",
                       "load_str_bytes": "pydantic.deprecated.parse"},
    "pydantic.class_validators": {"validator": "pydantic", "root_validator": "pydantic"},
}
_REMOVED_MODULES = ("pydantic.typing", "pydantic.utils")
_ATTRS = {"__fields__": "model_fields", "__fields_set__": "model_fields_set"}
_LITERAL = m.SimpleString() | m.Integer() | m.Name("True") | m.Name("False") | m.Name("None") \
    | m.UnaryOperation(m.Minus(), m.Integer()) | m.Attribute(m.Name(), m.Name())


def _kw(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword and a.keyword.value == name), None)


def _forward_reference(value: cst.BaseExpression) -> bool:
    """``Dict[str, "PathItem"]``: a string in a subscript (not ``Literal["a"]``)."""
    if not isinstance(value, cst.Subscript):
        return False
    for sub in [value, *m.findall(value, m.Subscript())]:
        assert isinstance(sub, cst.Subscript)
        head = sub.value.attr.value if isinstance(sub.value, cst.Attribute) else getattr(
            sub.value, "value", "")
        if head != "Literal" and any(m.matches(e, m.SubscriptElement(m.Index(m.SimpleString())))
                                     for e in sub.slice):
            return True
    return False

class PydanticApiRewrites(PydanticFieldShapes):
    """Fields, functions, model methods and attributes, imports."""

    # -- Field(...) ---------------------------------------------------------------------------

    def _is_field(self, call: cst.Call, constrained: bool = False) -> bool:
        kinds = ("Field", "fields.Field", *(
            ("conlist", "conset", "confrozenset", "types.conlist", "types.conset")
            if constrained else ()))
        return bool(self.qualified_names(call.func) & {n for k in kinds for n in self._names(k)})

    def _field_kwargs(self, original: cst.Call, updated: cst.Call) -> cst.Call | None:
        if not self._is_field(original, constrained=True) or not self.in_scope(original):
            return None
        args, changed = [], False
        for arg in updated.args:
            name = arg.keyword.value if arg.keyword else None
            if name in _FIELD_KWARGS:
                arg, changed = arg.with_changes(keyword=cst.Name(_FIELD_KWARGS[name])), True
            elif name == "allow_mutation" and m.matches(arg.value, m.Name("False")):
                arg, changed = arg.with_changes(keyword=cst.Name("frozen"),
                                                value=cst.Name("True")), True
            elif name == "unique_items":
                self._leave("Field(unique_items=) has no v2 form (a set type or an "
                            "AfterValidator)")
                return None
            args.append(arg)
        return updated.with_changes(args=args) if changed else None

    def _const(
        self, original: cst.Assign | cst.AnnAssign, target: cst.BaseAssignTargetExpression,
        value: cst.BaseExpression | None,
    ) -> cst.AnnAssign | None:
        """``x = Field(default=v, const=True)`` -> ``x: Literal[v] = Field(default=v)``."""
        if not (isinstance(value, cst.Call) and isinstance(original.value, cst.Call)
                and isinstance(target, cst.Name)):
            return None
        const = next((a for a in value.args if a.keyword and a.keyword.value == "const"), None)
        if const is None or not self._is_field(original.value) or not self.in_scope(original):
            return None
        default = next((a.value for a in value.args
                        if a.keyword is None or a.keyword.value == "default"), None)
        literal: cst.BaseExpression | None = None
        if m.matches(const.value, m.Name("True")) and default is not None and m.matches(
                default, _LITERAL):
            literal = default
        elif not m.matches(const.value, m.Name("False")):
            self._leave(f"Field(const=) of {target.value} needs a literal default for a "
                        "Literal[...] annotation; left as is")
            return None
        call = value.with_changes(args=_comma_args([a for a in value.args if a is not const]))
        self.changes += 1
        if literal is None:  # const=False: only the keyword goes
            annotation = original.annotation if isinstance(original, cst.AnnAssign) else None
            return None if annotation is None else cst.AnnAssign(target, annotation, call)
        AddImportsVisitor.add_needed_import(self.context, "typing", "Literal")
        annotation = cst.Annotation(cst.Subscript(
            cst.Name("Literal"), [cst.SubscriptElement(cst.Index(literal))]))
        return cst.AnnAssign(target, annotation, call)

    def leave_Assign(
        self, original_node: cst.Assign, updated_node: cst.Assign
    ) -> cst.BaseSmallStatement:
        if len(updated_node.targets) != 1:
            return updated_node
        if (not self.model_stack and self.in_scope(original_node)
                and _forward_reference(original_node.value)):
            self._leave(f"{cst.Module([]).code_for_node(original_node.targets[0].target)}: "
                        f"{REMOVED['forward-ref-alias']}")
        new = self._const(original_node, updated_node.targets[0].target, updated_node.value)
        return updated_node if new is None else new

    def leave_AnnAssign(
        self, original_node: cst.AnnAssign, updated_node: cst.AnnAssign
    ) -> cst.BaseSmallStatement:
        new = self._const(original_node, updated_node.target, updated_node.value)
        if new is None:
            new = self._model_field(original_node, updated_node)
        return updated_node if new is None else new
    # -- functions and model methods ----------------------------------------------------------

    def _api_call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression | None:
        """The v2 spelling of a v1 function or model-method call, or ``None``."""
        if not self.in_scope(original):
            return None
        field = self._field_kwargs(original, updated)
        if self._is_field(original) and not _kw(original, "unique_items"):
            field = self._extra_keywords(field or updated) or field
        if field is not None:
            self.changes += 1
            return field
        source = self._eval_source(original, updated)
        if source is not None:
            return source
        if isinstance(original.func, cst.Call) and isinstance(updated.func, cst.Call) and (
                self.qualified_names(original.func.func) & set(self._names("validator"))):
            return self._reused_validator(original.func, updated)
        names = self.qualified_names(original.func)
        if names & {*self._names("ValidationError"), "pydantic.error_wrappers.ValidationError"}:
            return self._validation_error(original, updated)
        if names & {"pydantic.error_wrappers.ErrorWrapper"}:
            self.wrappers[0] += 1  # judged at the module's end: the enclosing call may take it
            return None
        if names & {"pydantic.schema.schema"}:
            return self._schema(updated)
        if names & {"pydantic.parse_obj_as", "pydantic.tools.parse_obj_as",
                    "pydantic.schema_of", "pydantic.tools.schema_of"}:
            return self._adapter(updated, any(n.endswith("parse_obj_as") for n in names))
        func = updated.func
        if not isinstance(func, cst.Attribute) or not isinstance(original.func, cst.Attribute):
            return None
        method, receiver = func.attr.value, original.func.value
        if method == "update_forward_refs":
            return self._rebuild(updated, func)
        if not self._receiver_is_model(receiver, "parse_obj"):
            return None
        if method in ("parse_file", "schema_json"):
            self._leave(f".{method}() has no one-call v2 form (read the file / json.dumps the "
                        "model_json_schema()); left as is")
            return None
        new = {"copy": "model_copy", "construct": "model_construct",
               "schema": "model_json_schema"}.get(method)
        if new is None:
            return None
        if method == "copy" and any(a.keyword and a.keyword.value in ("include", "exclude")
                                    for a in updated.args):
            self._leave(".copy(include=/exclude=) has no v2 form; left as is")
            return None
        if method == "schema" and any(a.keyword and a.keyword.value == "ref_prefix"
                                      for a in updated.args):
            self._leave(".schema(ref_prefix=) has no direct v2 form; left as is")
            return None
        self.changes += 1
        return updated.with_changes(func=func.with_changes(attr=cst.Name(new)))

    def _schema(self, call: cst.Call) -> cst.BaseExpression | None:
        """``schema(models, by_alias=b, ref_prefix=p)`` -> ``{"definitions":
        models_json_schema([(m, "validation") for m in models], by_alias=b,
        ref_template=p + "{model}")[1].get("$defs", {})}``: v1's return shape."""
        positional = [a for a in call.args if a.keyword is None]
        kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if len(positional) != 1 or set(kw) - {"by_alias", "ref_prefix", "ref_template"}:
            self._leave("pydantic.schema.schema() with title/description or extra arguments; "
                        "left as is")
            return None
        models = cst.Module([]).code_for_node(positional[0].value)
        args = [cst.Arg(cst.parse_expression(f'[(m, "validation") for m in {models}]'))]
        if "by_alias" in kw:
            args.append(_kwarg("by_alias", kw["by_alias"]))
        template = kw.get("ref_template")
        if template is None:
            prefix = kw.get("ref_prefix", cst.SimpleString('"#/definitions/"'))
            template = cst.BinaryOperation(prefix, cst.Add(), cst.SimpleString('"{model}"'))
        args.append(_kwarg("ref_template", template))
        call_v2 = cst.Call(cst.Name("models_json_schema"), _comma_args(args))
        defs = cst.Call(cst.Attribute(cst.Subscript(call_v2, [cst.SubscriptElement(
            cst.Index(cst.Integer("1")))]), cst.Name("get")),
            _comma_args([cst.Arg(cst.SimpleString('"$defs"')), cst.Arg(cst.Dict([]))]))
        AddImportsVisitor.add_needed_import(self.context, "pydantic.json_schema",
                                            "models_json_schema")
        RemoveImportsVisitor.remove_unused_import(self.context, "pydantic.schema", "schema")
        self.changes += 1
        return cst.Dict([cst.DictElement(cst.SimpleString('"definitions"'), defs)])

    def _adapter(self, call: cst.Call, parse: bool) -> cst.BaseExpression | None:
        positional = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                      for a in call.args if a.keyword is None]
        if len(positional) != (2 if parse else 1) or len(call.args) != len(positional):
            self._leave("parse_obj_as/schema_of with keyword arguments; left as is")
            return None
        AddImportsVisitor.add_needed_import(self.context, "pydantic", "TypeAdapter")
        for module in ("pydantic", "pydantic.tools"):
            for name in ("parse_obj_as", "schema_of"):
                RemoveImportsVisitor.remove_unused_import(self.context, module, name)
        adapter = cst.Call(cst.Name("TypeAdapter"), [positional[0]])
        self.changes += 1
        if parse:
            return cst.Call(cst.Attribute(adapter, cst.Name("validate_python")), [positional[1]])
        return cst.Call(cst.Attribute(adapter, cst.Name("json_schema")), [])

    def _rebuild(self, call: cst.Call, func: cst.Attribute) -> cst.BaseExpression | None:
        if any(a.keyword is None or a.star for a in call.args):
            self._leave("update_forward_refs(*args/**ns) left as is")
            return None
        args = []
        if call.args:
            namespace = cst.Dict([cst.DictElement(cst.SimpleString(f'"{a.keyword.value}"'),
                                                  a.value) for a in call.args if a.keyword])
            args = [_kwarg("_types_namespace", namespace)]
        self.changes += 1
        return call.with_changes(func=func.with_changes(attr=cst.Name("model_rebuild")),
                                 args=args)
    # -- attributes and definitions with no mechanical form -----------------------------------

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        name = updated_node.attr.value
        if name in ("__config__", "__custom_root_type__") or (
                name in ("type_", "outer_type_") and self.uses_models):
            if self.in_scope(original_node):
                self._leave(f".{name}: {REMOVED[name]}")
            return updated_node
        if name in _ATTRS and self.in_scope(original_node):
            self.changes += 1
            return updated_node.with_changes(attr=cst.Name(_ATTRS[name]))
        return updated_node

    def _custom_type(self, node: cst.FunctionDef) -> None:
        if node.name.value in ("__get_validators__", "__modify_schema__") and self.in_scope(node):
            self._leave(f"{node.name.value}: {REMOVED[node.name.value]}")
    # -- imports ------------------------------------------------------------------------------

    def leave_ImportFrom(
        self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom
    ) -> cst.BaseSmallStatement | cst.RemovalSentinel:
        if updated_node.relative or updated_node.module is None:
            return updated_node
        module = cst.helpers.get_full_name_for_node(updated_node.module) or ""
        if isinstance(updated_node.names, cst.ImportStar) or not self.in_scope(original_node):
            return updated_node
        names = [a.evaluated_name for a in updated_node.names]
        if module == "pydantic.error_wrappers" and "ErrorWrapper" in names:
            # its uses decide: ValidationError([ErrorWrapper(...)], M) has a v2 form, and the
            # import goes once nothing uses it (else each use is left with the reason)
            RemoveImportsVisitor.remove_unused_import(self.context, module, "ErrorWrapper")
            others = [a for a in updated_node.names if a.evaluated_name != "ErrorWrapper"]
            if not others or any(a.evaluated_name not in _MOVED[module] for a in others):
                return updated_node
            for alias in others:  # ValidationError: from pydantic, in a statement of its own
                AddImportsVisitor.add_needed_import(
                    self.context, _MOVED[module][alias.evaluated_name], alias.evaluated_name,
                    alias.evaluated_alias)
            self.changes += 1
            kept = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                    for a in updated_node.names if a.evaluated_name == "ErrorWrapper"]
            return updated_node.with_changes(names=kept, lpar=None, rpar=None)
        removed = [n for n in names if f"{module}.{n}" in REMOVED]
        if module in _REMOVED_MODULES or removed:
            why = "; ".join(REMOVED.get(f"{module}.{n}", f"{module} is gone in v2")
                            for n in (removed or names[:1]))
            self._leave(f"from {module} import {', '.join(removed or names)}: {why}")
            return updated_node
        moved = _MOVED.get(module)
        if moved is None:
            return updated_node
        targets = {moved.get(n) for n in names}
        if None in targets or "" in targets or len(targets) != 1:
            self._leave(f"from {module} import {', '.join(names)}: not all of these have one "
                        "v2 home; left as is")
            return updated_node
        (target,) = targets
        assert target is not None
        self.changes += 1
        if target == "pydantic.deprecated.parse":
            self.warn(f"from {module}: repointed to pydantic.deprecated.parse, which v2 keeps "
                      "deprecated (calls warn PydanticDeprecatedSince20)")
        return updated_node.with_changes(module=cst.parse_expression(target))
