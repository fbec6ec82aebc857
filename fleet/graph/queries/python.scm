; Python: definitions, imports, references and local bindings.
; Capture conventions (shared by every language file):
;   @definition.<kind> the whole definition, with @name, optional @signature_end (the node the
;       header ends at: the body starts after it) and @bases (superclass list)
;   @import            a whole import statement (decoded by the language's import reader)
;   @reference.<kind>  a use: call | attribute | name
;   @local             a name bound inside a function (parameters, assignments, loop targets);
;                      with @local.type when its class is evident (`x = Cls(...)`, `x: Cls`,
;                      `x = Cls`)

(class_definition
  name: (identifier) @name
  superclasses: (argument_list)? @bases
  body: (block) @body) @definition.class

(function_definition
  name: (identifier) @name
  body: (block) @body) @definition.function

(module
  (expression_statement
    (assignment left: (identifier) @name)) @definition.variable)

(class_definition
  body: (block
    (expression_statement
      (assignment left: (identifier) @name)) @definition.variable))

; `(name): int = 1` and `(name) = 1` bind `name` too (Python drops the parentheses); the
; extractor keeps only a pattern of one name without a comma (`(name,) = ...` is a tuple)
(module
  (expression_statement
    (assignment left: (tuple_pattern (identifier) @name))) @definition.variable)

(class_definition
  body: (block
    (expression_statement
      (assignment left: (tuple_pattern (identifier) @name))) @definition.variable))

(import_statement) @import
(import_from_statement) @import

(call function: (identifier) @reference.call)
; A dotted chain is captured once, at its innermost `name.attr`; the extractor extends it over
; the following `.attr` parts in the source and tells a call by the `(` after it.
(attribute object: (identifier)) @reference.attribute
(decorator (identifier) @reference.name)
(argument_list (identifier) @reference.name)
(keyword_argument value: (identifier) @reference.name)
(type (identifier) @reference.name)
(return_statement (identifier) @reference.name)
(raise_statement (identifier) @reference.name)
(except_clause (identifier) @reference.name)
(except_clause (as_pattern . (identifier) @reference.name))
(assignment right: (identifier) @reference.name)
(for_statement right: (identifier) @reference.name)
(default_parameter value: (identifier) @reference.name)
(typed_default_parameter value: (identifier) @reference.name)
(list (identifier) @reference.name)
(tuple (identifier) @reference.name)
(set (identifier) @reference.name)
(pair value: (identifier) @reference.name)

(parameters (identifier) @local)
(lambda_parameters (identifier) @local)
(default_parameter name: (identifier) @local)
(typed_parameter . (identifier) @local)
(typed_default_parameter name: (identifier) @local)
(list_splat_pattern (identifier) @local)
(dictionary_splat_pattern (identifier) @local)
(assignment left: (pattern_list (identifier) @local))
(assignment left: (tuple_pattern (identifier) @local))
(augmented_assignment left: (identifier) @local)
(for_statement left: (identifier) @local)
(for_statement left: (pattern_list (identifier) @local))
(for_in_clause left: (identifier) @local)
(for_in_clause left: (pattern_list (identifier) @local))
(as_pattern_target (identifier) @local)
(named_expression name: (identifier) @local)

(typed_parameter . (identifier) @local
  type: (type [(identifier) (attribute)] @local.type))
(typed_default_parameter name: (identifier) @local
  type: (type [(identifier) (attribute)] @local.type))
(assignment left: (identifier) @local
  type: (type [(identifier) (attribute)] @local.type))
; one pattern for every `x = ...` (a second, untyped one would match each typed one again):
; typed by a call's callee (`x = Cls(...)`) or by the name it aliases (`_Style = Style`)
(assignment left: (identifier) @local
  right: [(call function: [(identifier) (attribute)] @local.type)
          (identifier) @local.type
          (attribute) @local.type]?)
