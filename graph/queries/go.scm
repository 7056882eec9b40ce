; Go: package, functions, methods with their receivers, types, struct fields, calls, types,
; imports, typed or constructed locals.

(package_clause (package_identifier) @name) @package

(function_declaration
  name: (identifier) @name
  result: (_)? @returns) @definition.function

(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      name: (identifier)? @self
      type: (_) @owner))
  name: (field_identifier) @name
  result: (_)? @returns) @definition.method

(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (struct_type)) @definition.struct)

(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (struct_type
      (field_declaration_list
        (field_declaration
          !name
          type: (_) @base)))) @definition.struct)

(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (interface_type)) @definition.interface)

; Embedded interfaces (a method set's other half).
(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (interface_type
      (type_elem . [(type_identifier) (qualified_type)] @base .))) @definition.interface)

(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: [(type_identifier) (qualified_type) (pointer_type) (slice_type) (map_type)
           (function_type) (channel_type) (array_type) (generic_type)]) @definition.type_alias)

(type_declaration
  (type_alias
    name: (type_identifier) @name) @definition.type_alias)

(field_declaration
  name: (field_identifier) @name
  type: (_) @type) @definition.field

(method_elem
  name: (field_identifier) @name
  result: (_)? @returns) @definition.method

(source_file
  (const_declaration
    (const_spec
      name: (identifier) @name
      type: (_)? @type) @definition.constant))

(source_file
  (var_declaration
    (var_spec
      name: (identifier) @name
      type: (_)? @type) @definition.variable))

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (selector_expression
    operand: (_) @receiver
    field: (field_identifier) @name)) @reference.call


(type_identifier) @name @reference.type
(qualified_type
  package: (package_identifier) @receiver
  name: (type_identifier) @name) @reference.type

(import_spec
  name: (package_identifier)? @import.alias
  path: (interpreted_string_literal) @import.module) @import
(import_spec
  name: (dot) @import.wildcard
  path: (interpreted_string_literal) @import.module) @import

(parameter_declaration
  name: (identifier) @name
  type: (_) @type) @local
(var_spec
  name: (identifier) @name
  type: (_) @type) @local
(short_var_declaration
  left: (expression_list . (identifier) @name)
  right: (expression_list . (call_expression function: (_) @value))) @local
(short_var_declaration
  left: (expression_list . (identifier) @name)
  right: (expression_list . [(composite_literal type: (_) @type)
                             (unary_expression operand: (composite_literal type: (_) @type))])) @local
; A type assertion binds its type (`val, ok := f.Value.(SliceValue)`).
(short_var_declaration
  left: (expression_list . (identifier) @name)
  right: (expression_list . (type_assertion_expression type: (_) @type))) @local
(var_spec
  name: (identifier) @name
  value: (expression_list . (call_expression function: (_) @value))) @local
(var_spec
  name: (identifier) @name
  value: (expression_list . [(composite_literal type: (_) @type)
                             (unary_expression operand: (composite_literal type: (_) @type))])) @local
