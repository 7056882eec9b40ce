; Dart: classes, mixins, enums, extensions, functions, methods, getters, fields, calls,
; imports, typed or constructed locals.

(class_declaration name: (identifier) @name) @definition.class
(class_declaration
  name: (identifier) @name
  superclass: (superclass type: (_) @base)) @definition.class
(mixin_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.enum
(extension_declaration name: (identifier) @name) @definition.class
(function_declaration
  signature: (function_signature
    name: (identifier) @name
    return_type: (_)? @returns)) @definition.function
(method_declaration
  signature: (method_signature
    (function_signature
      name: (identifier) @name
      return_type: (_)? @returns))) @definition.method
(method_declaration
  signature: (method_signature
    (getter_signature name: (identifier) @name return_type: (_)? @returns))) @definition.method
(member_declaration
  (declaration
    (type) @type
    (initialized_identifier_list
      (initialized_identifier name: (identifier) @name)))) @definition.field

(call_expression
  function: (identifier) @name) @reference.call
(call_expression
  function: (member_expression
    object: (_) @receiver
    property: (identifier) @name)) @reference.call
(type_identifier) @name @reference.type

(library_import
  (import_specification
    uri: (_) @import.module
    alias: (identifier)? @import.alias)) @import

(initialized_variable_declaration
  name: (identifier) @name
  value: (call_expression function: (_) @value)) @local
(initialized_variable_declaration
  (type) @type
  name: (identifier) @name) @local
(formal_parameter
  (type) @type
  name: (identifier) @name) @local
