"""The v1 shapes with a v2 form that the ``_pydantic_api`` rewrites build on: ValidationErrors
made of ``ErrorWrapper`` calls, reused validators, ``GenericModel`` bases, ``always=True`` on
required fields; the shared tables and helpers (``REMOVED``: what has no mechanical form, and why).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from fleet.campaigns.codemods._base import ScopedCodemodCommand

__all__ = ["REMOVED", "PydanticV1Shapes"]

#: v1 names with no mechanical v2 equivalent, and why (the warning, and the matcher's message)
REMOVED: dict[str, str] = {
    "pydantic.main.ModelMetaclass": "a class built on v1's ModelMetaclass must be redesigned "
    "on v2's model construction (__pydantic_init_subclass__, model_config)",
    "pydantic.main.ROOT_KEY": "custom root types are RootModel in v2 (.root, not __root__)",
    "pydantic.main.BaseConfig": "v2 configuration is a ConfigDict, not a class to inherit",
    "pydantic.error_wrappers.ErrorWrapper": "v2 ValidationErrors are built with "
    "ValidationError.from_exception_data, not from wrapped exceptions (only "
    "ValidationError([ErrorWrapper(exc, loc=...)], Model) has a mechanical form)",
    "pydantic.types.StrBytes": "removed in v2: spell it Union[str, bytes]",
    "pydantic.fields.ModelField": "v2 has FieldInfo (annotation, not type_/outer_type_)",
    "__config__": "v2 keeps configuration in model_config (a dict); code reading or "
    "replacing the Config class needs a redesign",
    "__custom_root_type__": "custom root types are RootModel in v2",
    "__get_validators__": "a v2 custom type defines __get_pydantic_core_schema__",
    "__modify_schema__": "a v2 custom type defines __get_pydantic_json_schema__",
    "type_": "ModelField.type_ is gone: v2's FieldInfo.annotation is the unparsed annotation",
    "outer_type_": "ModelField.outer_type_ is gone: v2's FieldInfo.annotation",
    "forward-ref-alias": "a type alias with a string forward reference: under v2 a model "
    "using it is not fully defined until the name resolves (model_rebuild() on each such model "
    "once it is defined; added only where v1 called update_forward_refs); left for an agent",
}

def _dict_items(items: list[tuple[str, cst.BaseExpression]]) -> list[cst.DictElement]:
    sep = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return [cst.DictElement(cst.SimpleString(f'"{k}"'), v,
                            comma=sep if i < len(items) - 1 else cst.MaybeSentinel.DEFAULT)
            for i, (k, v) in enumerate(items)]


def _kwarg(name: str, value: cst.BaseExpression) -> cst.Arg:
    eq = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
    return cst.Arg(value, keyword=cst.Name(name), equal=eq)


def _comma_args(args: list[cst.Arg]) -> list[cst.Arg]:
    sep = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    last = len(args) - 1
    return [a.with_changes(comma=sep if i < last else cst.MaybeSentinel.DEFAULT)
            for i, a in enumerate(args)]

class PydanticV1Shapes(ScopedCodemodCommand):
    """The base of ``MigratePydanticV2Command`` (through ``PydanticApiRewrites``), which sets
    these attributes."""

    v1_modules: tuple[str, ...]
    left_behind: bool  # some v1-only API stays: the v1 imports must stay too
    uses_models: bool  # some name in the module refers to a model class
    model_stack: list[bool]  # per enclosing class: is it a model
    class_stack: list[cst.ClassDef]  # the enclosing classes (original nodes)
    wrappers: list[int]  # ErrorWrapper calls seen, and rewritten into from_exception_data
    known_models: set[str]  # qualified names of the model classes (the graph's and this file's)
    _receiver_is_model: Callable[[cst.BaseExpression, str], bool]

    def _names(self, suffix: str) -> list[str]:
        return [f"{mod}.{suffix}" for mod in self.v1_modules]

    def _reused_validator(self, inner: cst.Call, call: cst.Call) -> cst.BaseExpression | None:
        """``validator("f", allow_reuse=True)(fn)`` -> ``field_validator("f")(fn)`` (v2's own
        spelling of a reused validator)."""
        kw = {a.keyword.value: a for a in inner.args if a.keyword is not None}
        pre = kw.get("pre")
        if set(kw) - {"allow_reuse", "pre", "check_fields"} or (
                pre is not None and not m.matches(pre.value, m.Name("True") | m.Name("False"))):
            self._leave("a reused validator(...) with each_item=/always=; left as is")
            return None
        args = [a for a in inner.args if a.keyword is None or a.keyword.value == "check_fields"]
        if pre is not None and m.matches(pre.value, m.Name("True")):
            args.append(_kwarg("mode", cst.SimpleString('"before"')))
        AddImportsVisitor.add_needed_import(self.context, "pydantic", "field_validator")
        for module in self.v1_modules:
            RemoveImportsVisitor.remove_unused_import(self.context, module, "validator")
        self.changes += 1
        assert isinstance(call.func, cst.Call)
        return call.with_changes(func=call.func.with_changes(
            func=cst.Name("field_validator"), args=_comma_args(args)))

    def _validation_error(self, original: cst.Call, call: cst.Call) -> cst.BaseExpression | None:
        """``ValidationError([ErrorWrapper(exc, loc=L)], Model)`` (or ``errors=``/``model=``) ->
        ``ValidationError.from_exception_data(Model.__name__, [{"type": "value_error", "loc":
        (L,), "input": None, "ctx": {"error": exc}}])``."""
        def parts(c: cst.Call) -> tuple[cst.BaseExpression | None, cst.BaseExpression | None]:
            positional = [a.value for a in c.args if a.keyword is None]
            kw = {a.keyword.value: a.value for a in c.args if a.keyword is not None}
            return (positional[0] if positional else kw.get("errors"),
                    positional[1] if len(positional) > 1 else kw.get("model"))

        (seen, _), (errors, model) = parts(original), parts(call)
        wrapper = m.Call(args=[m.Arg(keyword=None), m.Arg(keyword=m.Name("loc"))])
        if not isinstance(seen, cst.List) or not isinstance(errors, cst.List) or model is None \
                or not seen.elements or not all(
                    m.matches(e.value, wrapper) and isinstance(e.value, cst.Call)
                    and self.qualified_names(e.value.func)
                    & {"pydantic.error_wrappers.ErrorWrapper"} for e in seen.elements):
            return None
        details = []
        for element in errors.elements:
            assert isinstance(element.value, cst.Call)
            exc, loc = element.value.args[0].value, element.value.args[1].value
            if not isinstance(loc, cst.Tuple):
                loc = cst.Tuple([cst.Element(loc, comma=cst.Comma())])
            details.append(cst.Element(cst.Dict(_dict_items([
                ("type", cst.SimpleString('"value_error"')), ("loc", loc),
                ("input", cst.Name("None")), ("ctx", cst.Dict(_dict_items([("error", exc)])))]))))
        RemoveImportsVisitor.remove_unused_import(self.context, "pydantic.error_wrappers",
                                                  "ErrorWrapper")
        self.wrappers[1] += len(details)
        self.changes += 1
        return cst.Call(cst.Attribute(cst.Name("ValidationError"), cst.Name("from_exception_data")),
                        _comma_args([cst.Arg(cst.Attribute(model, cst.Name("__name__"))),
                                     cst.Arg(cst.List(details))]))
    # -- classes ------------------------------------------------------------------------------

    def _generic_bases(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        """``class F(GenericModel, Generic[T])`` -> ``class F(BaseModel, Generic[T])``."""
        if not self.in_scope(original):
            return updated
        bases = list(updated.bases)
        for index, base in enumerate(original.bases):
            if self.qualified_names(base.value) & {"pydantic.generics.GenericModel"}:
                bases[index] = bases[index].with_changes(value=cst.Name("BaseModel"))
                AddImportsVisitor.add_needed_import(self.context, "pydantic", "BaseModel")
                RemoveImportsVisitor.remove_unused_import(self.context, "pydantic.generics",
                                                          "GenericModel")
                self.changes += 1
        return updated.with_changes(bases=bases)

    def _required(self, call: cst.Call) -> bool:
        """Every field the validator ``call`` names is required (annotated, no default, or
        ``Field(...)``) in the enclosing class: ``always=True`` changes nothing for them."""
        if not self.class_stack or not isinstance(self.class_stack[-1].body, cst.IndentedBlock):
            return False
        fields = [a.value for a in call.args if a.keyword is None]
        if not fields or not all(isinstance(f, cst.SimpleString) for f in fields):
            return False
        names = {f.evaluated_value for f in fields if isinstance(f, cst.SimpleString)}
        required = set()
        for stmt in self.class_stack[-1].body.body:
            for ann in m.findall(stmt, m.AnnAssign(target=m.Name())) if isinstance(
                    stmt, cst.SimpleStatementLine) else []:
                assert isinstance(ann, cst.AnnAssign) and isinstance(ann.target, cst.Name)
                if ann.value is None or m.matches(ann.value, m.Call(args=[
                        m.Arg(m.Ellipsis(), keyword=None), m.ZeroOrMore(m.Arg(keyword=m.Name(
                            m.MatchIfTrue(lambda k: k not in ("default", "default_factory")))))])):
                    required.add(ann.target.value)
        return names <= required
    def _rebuild_imported(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        """Where v1 resolved forward references (module-level ``M.update_forward_refs()``, as
        a package ``__init__`` does once it imported every model), v2 also has to complete the
        other imported models whose annotations name a class only defined later (a
        ``Callback = Dict[str, "PathItem"]`` alias): each gets ``model_rebuild(raise_errors=
        False)`` there - a no-op for a complete model, and lenient, as v1 was, for one still
        unresolvable."""
        calls = [i for i, stmt in enumerate(original.body) if m.matches(stmt, m.SimpleStatementLine(
            [m.Expr(m.Call(m.Attribute(attr=m.Name("update_forward_refs"))))]))
            and self.in_scope(stmt)]
        if not calls:
            return updated
        models = []
        for stmt in original.body:
            for imp in m.findall(stmt, m.ImportFrom()) if isinstance(
                    stmt, cst.SimpleStatementLine) else []:
                assert isinstance(imp, cst.ImportFrom)
                if isinstance(imp.names, cst.ImportStar):
                    continue
                module = cst.helpers.get_full_name_for_node(imp.module) if imp.module else ""
                base = self._absolute("." * len(imp.relative) + (module or "")) if imp.relative \
                    else module
                for alias in imp.names:
                    name = f"{base}.{alias.evaluated_name}"
                    short = {(k.split(".", 1)[0], k.rsplit(".", 1)[-1]) for k in self.known_models}
                    if name in self.known_models or (name.split(".", 1)[0],
                                                      alias.evaluated_name) in short:
                        models.append(alias.evaluated_alias or alias.evaluated_name)
        if not models:
            return updated
        loop = cst.parse_statement(
            f"for _model in ({', '.join(dict.fromkeys(models))},):\n"
            "    _model.model_rebuild(raise_errors=False)\n")
        self.changes += 1
        body = list(updated.body)
        body.insert(calls[-1] + 1, loop)
        return updated.with_changes(body=body)

    def _api_module_end(self) -> None:
        left = self.wrappers[0] - self.wrappers[1]
        if left:
            self._leave(f"{left} ErrorWrapper(...) left: "
                        f"{REMOVED['pydantic.error_wrappers.ErrorWrapper']}")

    def _leave(self, why: str) -> None:
        self.left_behind = True
        self.warn(why)


#: the keywords of v1 ``.json()`` that ``model_dump`` takes; the others go to ``json.dumps``
_DUMP_KEYWORDS = {"include", "exclude", "by_alias", "exclude_unset", "exclude_defaults",
                  "exclude_none"}


def takes_dumps_keywords(call: cst.Call) -> bool:
    """Whether ``m.json(...)`` passes a ``json.dumps`` keyword that ``model_dump_json`` does not
    take (``sort_keys=``, ``separators=``, ``ensure_ascii=`` ...: a TypeError under v2)."""
    known = _DUMP_KEYWORDS | {"indent", "encoder", "models_as_dict"}
    return any(a.keyword is not None and a.keyword.value not in known for a in call.args)


def v1_json_call(call: cst.Call) -> cst.Call | None:
    """``m.json(by_alias=True, indent=2)`` -> ``json.dumps(m.model_dump(mode="json",
    by_alias=True), indent=2)``: v1's ``.json()`` is ``json.dumps`` of the model's dict, so this
    keeps its ``", "``/``": "`` separators, ``ensure_ascii`` and any ``json.dumps`` keyword
    (``model_dump_json`` is compact UTF-8 and takes only ``indent``). ``None`` (keep the
    ``model_dump_json`` rename) for positional or ``**`` arguments, ``encoder=`` and
    ``models_as_dict=``, which have no ``model_dump`` keyword."""
    assert isinstance(call.func, cst.Attribute)
    dump: list[cst.Arg] = [_kwarg("mode", cst.SimpleString('"json"'))]
    dumps: list[cst.Arg] = []
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value in {"encoder", "models_as_dict"}:
            return None
        (dump if arg.keyword.value in _DUMP_KEYWORDS else dumps).append(arg)
    inner = cst.Call(func=call.func.with_changes(attr=cst.Name("model_dump")),
                     args=_comma_args(dump))
    return call.with_changes(
        func=cst.Attribute(cst.Name("json"), cst.Name("dumps")),
        args=_comma_args([cst.Arg(inner), *dumps]),
    )
