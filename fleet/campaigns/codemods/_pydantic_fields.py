"""The v1 field and configuration semantics v2 changed, in a model's body (a mixin of
``MigratePydanticV2Command``, through ``PydanticApiRewrites``):

- a field annotated ``Optional[X]`` / ``Union[X, None]`` / ``X | None`` / ``Any`` with no
  default was optional in v1 (default ``None``) and is *required* in v2: it gets ``= None``
  (``Field(alias=...)`` without a default gets ``Field(None, alias=...)``);
- ``_x: T = Field(d, ...)``: v1 made no field of an underscore name (never validated, never
  dumped, its alias never read), v2 rejects the ``Field`` there (``PydanticUserError``): it
  becomes the private attribute v2 makes of such a name, ``PrivateAttr(d)``;
- ``Field(..., example=e)``: v1's extra keywords went into the field's JSON schema, v2 takes them
  as ``json_schema_extra={"example": e}`` (the extra keywords are deprecated);
- ``class Config`` keys v2 removed: ``smart_union = True`` (v2's unions are smart) and
  ``underscore_attrs_are_private = True`` (v2 always) are dropped; the others have no v2 key
  (``REMOVED_CONFIG`` says why) and leave the class as it was, with the reason;
- ``eval(f"conlist(T, min_items={n})")``: a v1 keyword in Python source that the code evaluates
  with pydantic's ``conlist`` (jsf 0.7.1's tuple models) is renamed in the string too.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor

from fleet.campaigns.codemods._pydantic_shapes import PydanticV1Shapes, _comma_args, _kwarg

__all__ = ["CONFIG_RENAMES", "FIELD_KEYWORDS", "REMOVED_CONFIG", "PydanticFieldShapes"]

CONFIG_RENAMES: dict[str, str] = {
    "orm_mode": "from_attributes",
    "allow_population_by_field_name": "populate_by_name",
    "anystr_strip_whitespace": "str_strip_whitespace",
    "anystr_lower": "str_to_lower",
    "anystr_upper": "str_to_upper",
    "max_anystr_length": "str_max_length",
    "min_anystr_length": "str_min_length",
    "validate_all": "validate_default",
    "schema_extra": "json_schema_extra",
    "allow_mutation": "frozen",  # inverted below
}

#: the keywords ``Field`` takes in v1 or v2 (any other is a v1 "extra": ``json_schema_extra``)
FIELD_KEYWORDS = frozenset({
    "default", "default_factory", "alias", "title", "description", "exclude", "include",
    "const", "gt", "ge", "lt", "le", "multiple_of", "allow_inf_nan", "max_digits",
    "decimal_places", "min_items", "max_items", "unique_items", "min_length", "max_length",
    "allow_mutation", "regex", "discriminator", "repr", "examples", "json_schema_extra",
    "frozen", "validate_default", "pattern", "strict", "validation_alias", "serialization_alias",
    "alias_priority", "deprecated", "init", "init_var", "kw_only", "union_mode",
    "coerce_numbers_to_str", "fail_fast", "field_title_generator",
})
#: Config keys v2 removed: ``None`` = dropped when set to True (v2 behaves so always), else why
#: there is no mechanical form
REMOVED_CONFIG: dict[str, str | None] = {
    "smart_union": None,
    "underscore_attrs_are_private": None,
    "copy_on_model_validation": "v2 never copies a model instance on validation (revalidate_"
    "instances is the nearest setting)",
    "fields": "v2 has no Config.fields: each field's alias/settings go on its Field()",
    "getter_dict": "v2's from_attributes reads attributes without a GetterDict",
    "json_loads": "v2 parses JSON in pydantic-core: no json_loads hook",
    "json_dumps": "v2 serialises JSON in pydantic-core: no json_dumps hook",
    "error_msg_templates": "v2 error messages are customised by catching and rewriting errors",
    "post_init_call": "v2 has no post_init_call",
}
_EVAL_RENAMES = {"min_items": "min_length", "max_items": "max_length"}
_EVAL_V1 = re.compile(r"\bcon(list|set|frozenset)\(.*\b(min|max)_items=", re.S)


class PydanticFieldShapes(PydanticV1Shapes):
    """Field defaults, private names, extra keywords, removed Config keys, eval'd source."""

    field_nodes: set[int]  # ids of the AnnAssign nodes directly in a model's body
    _is_field: Callable[[cst.Call], bool]

    def _mark_fields(self, node: cst.ClassDef) -> None:
        """Remember the annotated assignments of the model ``node``'s own body."""
        if not isinstance(node.body, cst.IndentedBlock):
            return
        for stmt in node.body.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                self.field_nodes.update(id(s) for s in stmt.body if isinstance(s, cst.AnnAssign))

    def _implicit_none(self, annotation: cst.BaseExpression) -> bool:
        """Whether v1 gave a field of this annotation the default ``None``."""
        if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator,
                                                                      cst.BitOr):
            return any(m.matches(side, m.Name("None")) or self._implicit_none(side)
                       for side in (annotation.left, annotation.right))
        names = self.qualified_names(
            annotation.value if isinstance(annotation, cst.Subscript) else annotation)
        if not isinstance(annotation, cst.Subscript):
            return bool(names & {"typing.Any", "typing.Optional"})
        elements = [e.slice.value for e in annotation.slice if isinstance(e.slice, cst.Index)]
        if names & {"typing.Optional"}:
            return True
        if names & {"typing.Union"}:
            return any(m.matches(e, m.Name("None")) or self._implicit_none(e) for e in elements)
        if names & {"typing.Annotated", "typing_extensions.Annotated"} and elements:
            return self._implicit_none(elements[0])
        return False

    def _model_field(self, original: cst.AnnAssign, updated: cst.AnnAssign) -> cst.AnnAssign | None:
        """The v2 spelling of a v1 field whose meaning v2 changed, or ``None``."""
        if id(original) not in self.field_nodes or not self.in_scope(original) or not isinstance(
                updated.target, cst.Name):
            return None
        name, value = updated.target.value, updated.value
        field = isinstance(value, cst.Call) and isinstance(original.value, cst.Call) and \
            self._is_field(original.value)
        if name.startswith("_"):
            if not field:
                return None
            assert isinstance(value, cst.Call)
            default = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in value.args
                       if (a.keyword is None and not a.star)
                       or (a.keyword is not None and a.keyword.value in (
                           "default", "default_factory"))][:1]
            if default and m.matches(default[0], m.Arg(m.Ellipsis())):
                default = []
            self.warn(f"{name}: v1 made no field of an underscore name (its Field() was never "
                      "read); v2 rejects a Field() there: now PrivateAttr with its default")
            AddImportsVisitor.add_needed_import(self.context, "pydantic", "PrivateAttr")
            self.changes += 1
            return updated.with_changes(value=cst.Call(cst.Name("PrivateAttr"), default))
        if not self._implicit_none(original.annotation.annotation):
            return None
        if value is None:
            self.changes += 1
            return updated.with_changes(value=cst.Name("None"),
                                        equal=cst.AssignEqual())
        if not field:
            return None
        assert isinstance(value, cst.Call)
        if any(a.keyword is None or a.keyword.value in ("default", "default_factory")
               for a in value.args):
            return None
        self.changes += 1
        return updated.with_changes(value=value.with_changes(
            args=_comma_args([cst.Arg(cst.Name("None")), *value.args])))

    def _extra_keywords(self, call: cst.Call) -> cst.Call | None:
        """``Field(x, example=e)`` -> ``Field(x, json_schema_extra={"example": e})``."""
        extra = [a for a in call.args if a.keyword is not None and a.keyword.value not in
                 FIELD_KEYWORDS]
        if not extra or any(a.keyword is not None and a.keyword.value == "json_schema_extra"
                            for a in call.args):
            return None
        sep = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        items = [cst.DictElement(cst.SimpleString(f'"{a.keyword.value}"'), a.value,
                                 comma=sep if i < len(extra) - 1 else cst.MaybeSentinel.DEFAULT)
                 for i, a in enumerate(extra) if a.keyword is not None]
        kept = [a for a in call.args if a not in extra]
        return call.with_changes(args=_comma_args([*kept, _kwarg("json_schema_extra",
                                                                  cst.Dict(items))]))

    def _removed_config(self, key: str, value: cst.BaseExpression) -> bool | None:
        """For a v1 Config key v2 removed: ``True`` = drop it, ``False`` = no mechanical form
        (warned), ``None`` = not a removed key."""
        if key not in REMOVED_CONFIG:
            return None
        why = REMOVED_CONFIG[key]
        if why is None and m.matches(value, m.Name("True")):
            return True
        self._leave(f"class Config: {key} = ... has no v2 key"
                    + (f" ({why})" if why else " (v2 behaves as if it were True)")
                    + "; left as is")
        return False

    def _eval_source(self, original: cst.Call, updated: cst.Call) -> cst.Call | None:
        """``eval("conlist(T, min_items=2)")``: the v1 keywords renamed inside the source."""
        if not (self.qualified_names(original.func) & {"builtins.eval", "builtins.exec"}) or \
                not updated.args or updated.args[0].keyword is not None:
            return None
        source = updated.args[0].value
        code = cst.Module([]).code_for_node(source)
        if not isinstance(source, cst.SimpleString | cst.FormattedString | cst.ConcatenatedString) \
                or not _EVAL_V1.search(code):
            return None
        renamed = re.sub(r"\b(min|max)_items=", lambda g: _EVAL_RENAMES[g.group(0)[:-1]] + "=",
                         code)
        self.warn("min_items=/max_items= renamed inside the source passed to eval/exec "
                  "(v2's conlist/conset take min_length=/max_length=, and return "
                  "Annotated[list[T], Len(...)], not a class)")
        self.changes += 1
        return updated.with_changes(args=[updated.args[0].with_changes(
            value=cst.parse_expression(renamed)), *updated.args[1:]])
