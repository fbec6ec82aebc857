; Go: definitions, imports and calls (conventions as in python.scm).
; A method's @receiver names its type: the method's qualified name is Type.Method.

(function_declaration
  name: (identifier) @name
  body: (block) @body) @definition.function

(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [(type_identifier) @receiver
             (pointer_type (type_identifier) @receiver)
             (generic_type type: (type_identifier) @receiver)
             (pointer_type (generic_type type: (type_identifier) @receiver))]))
  name: (field_identifier) @name
  body: (block) @body) @definition.method

(source_file
  (type_declaration
    (type_spec name: (type_identifier) @name type: (_) @body)) @definition.class)

(source_file
  (var_declaration (var_spec name: (identifier) @name)) @definition.variable)
(source_file
  (const_declaration (const_spec name: (identifier) @name)) @definition.variable)

(import_declaration) @import

(call_expression function: (identifier) @reference.call)
(call_expression function: (selector_expression) @reference.call)

(parameter_declaration name: (identifier) @local)
(short_var_declaration left: (expression_list (identifier) @local))
