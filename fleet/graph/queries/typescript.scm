; TypeScript: definitions, imports and calls (conventions as in python.scm).

(class_declaration
  name: (type_identifier) @name
  (class_heritage (_) @bases)?
  body: (class_body) @body) @definition.class

(abstract_class_declaration
  name: (type_identifier) @name
  body: (class_body) @body) @definition.class

(interface_declaration
  name: (type_identifier) @name
  body: (_) @body) @definition.class

(function_declaration
  name: (identifier) @name
  body: (statement_block) @body) @definition.function

(method_definition
  name: (property_identifier) @name
  body: (statement_block) @body) @definition.function

(program
  (lexical_declaration
    (variable_declarator name: (identifier) @name)) @definition.variable)
(program
  (export_statement
    (lexical_declaration
      (variable_declarator name: (identifier) @name))) @definition.variable)
(program
  (type_alias_declaration name: (type_identifier) @name) @definition.variable)
(program
  (export_statement
    (type_alias_declaration name: (type_identifier) @name)) @definition.variable)

(import_statement) @import

(call_expression function: (identifier) @reference.call)
(call_expression function: (member_expression) @reference.call)
(new_expression constructor: (identifier) @reference.call)

(required_parameter pattern: (identifier) @local)
(optional_parameter pattern: (identifier) @local)
(variable_declarator name: (identifier) @local)
