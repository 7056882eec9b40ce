; TypeScript only: types, interfaces, signatures, return types, annotated locals and fields.
(function_declaration
  name: (identifier) @name
  return_type: (type_annotation (_) @returns)) @definition.function
(method_definition
  name: (_) @name
  return_type: (type_annotation (_) @returns)) @definition.method
(function_signature
  name: (identifier) @name
  return_type: (type_annotation (_) @returns)?) @definition.function
(method_signature
  name: (_) @name
  return_type: (type_annotation (_) @returns)?) @definition.method
(abstract_method_signature
  name: (_) @name
  return_type: (type_annotation (_) @returns)?) @definition.method
(abstract_class_declaration
  name: (type_identifier) @name) @definition.class
(interface_declaration
  name: (type_identifier) @name) @definition.interface
(interface_declaration
  name: (type_identifier) @name
  (extends_type_clause type: (_) @base)) @definition.interface
(type_alias_declaration
  name: (type_identifier) @name
  value: (_) @type) @definition.type_alias
(enum_declaration
  name: (identifier) @name) @definition.enum
(internal_module
  name: (_) @name) @definition.module
(module
  name: (_) @name) @definition.module
(class_declaration
  name: (_) @name
  (class_heritage (extends_clause value: (_) @base))) @definition.class
(abstract_class_declaration
  name: (_) @name
  (class_heritage (extends_clause value: (_) @base))) @definition.class
(class_declaration
  name: (_) @name
  (class_heritage (implements_clause (_) @base))) @definition.class
(public_field_definition
  name: (_) @name
  type: (type_annotation (_) @type)?) @definition.field
(property_signature
  name: (_) @name
  type: (type_annotation (_) @type)?) @definition.field

(type_annotation (type_identifier) @name) @reference.type
(generic_type name: (type_identifier) @name) @reference.type
(type_annotation (nested_type_identifier module: (_) @receiver name: (type_identifier) @name)) @reference.type
(extends_clause value: (identifier) @name) @reference.type
(implements_clause (type_identifier) @name) @reference.type
(extends_type_clause type: (type_identifier) @name) @reference.type

(variable_declarator
  name: (identifier) @name
  type: (type_annotation (_) @type)) @local
(required_parameter
  pattern: (identifier) @name
  type: (type_annotation (_) @type)) @local
; A callback's untyped parameter (`operate((source, subscriber) => …)`): typed by the
; function type the callee declares for that argument (the extractor records where).
(arrow_function
  parameter: (identifier) @name @local)
(arrow_function
  parameters: (formal_parameters
    (required_parameter
      pattern: (identifier) @name
      !type) @local))
(function_expression
  parameters: (formal_parameters
    (required_parameter
      pattern: (identifier) @name
      !type) @local))
(optional_parameter
  pattern: (identifier) @name
  type: (type_annotation (_) @type)) @local
